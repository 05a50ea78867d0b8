//! The splitting, normalization and read-only answers of the shell analysis.

use super::{analyze, is_read_only};

fn texts(command: &str) -> Vec<String> {
    let analysis = analyze(command);
    assert_eq!(analysis.unanalyzable, None, "{command}");
    analysis.commands.into_iter().map(|c| c.text).collect()
}

#[test]
fn commands_split_at_operators_and_inside_substitutions() {
    for (command, expected) in [
        ("git fetch && git clean -fd", vec!["git fetch", "git clean -fd"]),
        ("a || b; c | d |& e & f\ng", vec!["a", "b", "c", "d", "e", "f", "g"]),
        ("(a; b) && { c; }", vec!["a", "b", "c"]),
        ("echo $(rm -rf /) `touch x`", vec!["echo '$(rm -rf /)' '`touch x`'", "rm -rf /", "touch x"]),
        ("diff <(sort a) >(cat)", vec!["diff '<(sort a)' >(cat)", "sort a", "cat"]),
        ("FOO=1 BAR=2 npm test", vec!["npm test"]),
        ("timeout 5 nice -n 3 rm -rf /", vec!["rm -rf /"]),
        ("bash -c 'sh -c \"rm -rf /\"'", vec!["bash -c 'sh -c \"rm -rf /\"'", "sh -c 'rm -rf /'", "rm -rf /"]),
        ("'r''m' -rf /", vec!["rm -rf /"]),
        ("\\rm -rf /", vec!["rm -rf /"]),
        ("$'\\x72m' -rf /", vec!["rm -rf /"]),
        ("find . -exec rm -rf {} \\;", vec!["find . -exec rm -rf {} ;", "rm -rf {}"]),
        ("ls | xargs -n1 rm", vec!["ls", "rm"]),
        ("git commit -m \"fix the bug\"", vec!["git commit -m 'fix the bug'"]),
    ] {
        assert_eq!(texts(command), expected, "{command}");
    }
}

#[test]
fn what_cannot_be_seen_through_is_unanalyzable() {
    for command in [
        "eval 'rm -rf /'",
        "source ./x.sh",
        ". ./x.sh",
        "$CMD -rf /",
        "echo 'rm -rf /' | bash",
        "bash <<< 'rm -rf /'",
        "ｒｍ -rf /",
        "echo 'unterminated",
        "r?  -rf /",
        "alias x=ls",
        "env -S 'rm -rf /'",
        "bash -c \"$X\"",
    ] {
        assert!(analyze(command).unanalyzable.is_some(), "should be unanalyzable: {command}");
    }
}

#[test]
fn read_only_commands() {
    for command in [
        "ls -la",
        "cat src/main.rs | head -n 20",
        "grep -rn 'fn main' src && wc -l README.md",
        "git status; git diff HEAD~1 -- src",
        "git -C sub log --oneline -5",
        "git branch",
        "git branch -a -v",
        "git branch --list 'feat*'",
        "find . -name '*.rs' -type f 2>/dev/null",
        "sed -n '1,20p' file.txt",
        "sed 's/foo/bar/g' file.txt",
        "sed -e '/^#/d' -e 's|a|b|' f",
        "echo $(pwd) `basename $HOME`",
        "diff <(sort a) <(sort b)",
        "ls > /dev/null 2>&1",
        "cat file 2>&1 | sort | uniq -c",
        "rg -n TODO --type rust",
        "echo \"a;b\" 'c|d'",
        "cat <<EOF\nhello\nEOF",
        "LC_ALL=C sort file",
        "test -f x && echo yes || echo no",
        "[ -d src ]",
        "echo ${HOME:-/root}",
        "ls # a comment; rm -rf /",
        "(ls && pwd)",
        "cat <<'EOF'\n$(rm x)\nEOF\necho done",
        "cat <<-END\n\tline\n\tEND",
        "cat <<< \"a b\"",
        "{ ls; pwd; }",
        "cat < f",
        "LC_ALL=C TZ=UTC ls -l",
        "env LANG=C sort -u f",
        "sed --quiet --expr=1p f",
        "git --no-pager log --oneline | head",
        "[ $# -eq 0 ] && echo none",
        "echo $((1 + 2))",
        "cat <<EOF\n${HOME:-x} $USER\nEOF",
        // Builtins that change only the directory or a harmless export: the restricted
        // child reports them back to the shell.
        "cd src && ls",
        "pushd src >/dev/null && ls && popd",
        "export LANG=C LC_ALL=C; sort f",
    ] {
        assert!(is_read_only(command), "should be read-only: {command}");
    }
}

#[test]
fn commands_that_write_run_programs_or_are_not_understood() {
    for command in [
        "rm -rf target",
        "ls > out.txt",
        "echo hi >> log",
        "cat a &> all.txt",
        "ls >&out.txt",
        "sed -i 's/a/b/' f",
        "sed 's/a/b/w out' f",
        "sed '1e rm -rf /' f",
        "sed -f script.sed f",
        "find . -delete",
        "find . -exec rm {} \\;",
        "find . -fprint out",
        "git commit -m x",
        "git push",
        "git -c core.pager=sh log",
        "git diff --output=patch.diff",
        "git branch new-feature",
        "git branch -D old",
        "git grep -O vim foo",
        "cargo build",
        // Cargo reads `.cargo/config.toml`, whose `rustc-wrapper` runs.
        "cargo metadata --format-version 1",
        "cargo tree -e normal",
        // Leading assignments of names that are not harmless.
        "FOO=1 ls",
        "env DEBUG=1 ls",
        "/usr/bin/time -o out ls",
        // Bash's network paths.
        "cat < /dev/tcp/127.0.0.1/80",
        "exec 3</dev/udp/127.0.0.1/53",
        "echo $(rm -rf /)",
        "echo `touch x`",
        "ls && touch x",
        "ls; npm install",
        "ls | xargs rm",
        "$CMD args",
        "x=1",
        "export FOO=1; ls",
        "export -f ls; ls",
        "export PATH=./bin; ls",
        "export LANG; ls",
        "echo $((x=5))",
        "echo ${x:=5}",
        "for f in *; do cat $f; done",
        "if true; then ls; fi",
        "sort -o out in",
        "uniq in out",
        "date -s '2020-01-01'",
        "printf -v var x",
        "rg --pre ./evil foo",
        "tree -o out.txt",
        "python3 -c 'print(1)'",
        "/bin/ls",
        "cat > file <<EOF\nx\nEOF",
        "echo 'unterminated",
        "",
        "ls >",
        "tee out.txt",
        "diff <(rm a) b",
        "cat <<EOF\n$(rm x)\nEOF",
        "cat <<EOF\nx\nEOF\nrm y",
    ] {
        assert!(!is_read_only(command), "should not be read-only: {command}");
    }
}

#[test]
fn where_bash_and_the_grammar_disagree_the_command_is_unanalyzable() {
    for command in [
        "cat <<E\"O\"F\nx\nEOF\nrm v\nE\"O\"F",
        "cat <<$'EOF'\nx\nEOF\nrm v\nEOF",
        "r\\\nm v",
        "ls -l\\\na",
        "echo `echo \\`rm v\\``",
        "echo \"${x:-`rm v`}\"",
        "test -v 'a[$(rm v)]'",
        "[ -v 'a[$(rm v)]' ]",
        "[[ -v a[$(rm v)] ]]",
        "[[ $x -eq 1 ]]",
        "echo $((x+1))",
        "((x > 1))",
        "echo ${a[$i]}",
        "a[$i]=1",
        "echo ${x:$off}",
        "echo ${!x}",
        "let x=1",
        "declare -i x=1",
        "coproc rm v",
        "coproc x { rm v; }",
        "c=rm; $c v",
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='rm v' git status",
        "GIT_EXTERNAL_DIFF='rm v;' git diff",
        "PATH=./bin:$PATH ls",
        "LD_PRELOAD=./x.so ls",
        "env PAGER=sh git log",
        "export PATH=./bin",
        "xargs --bogus rm",
        "timeout --bogus 5 rm v",
        "strace rm v",
        "watch rm v",
        "flock /tmp/l -c 'rm v' && eval x",
    ] {
        assert!(analyze(command).unanalyzable.is_some(), "should be unanalyzable: {command:?}");
    }
}

#[test]
fn wrappers_with_their_options_are_seen_through() {
    for (command, expected) in [
        ("xargs --max-args 1 rm", "rm"),
        ("xargs --max-a=1 -0 rm v", "rm v"),
        ("/usr/bin/time -o /dev/null rm v", "rm v"),
        ("stdbuf --output L rm v", "rm v"),
        ("stdbuf -oL -eL rm v", "rm v"),
        ("busybox rm v", "rm v"),
        ("flock /tmp/l rm v", "rm v"),
        ("flock -w 3 /tmp/l rm v", "rm v"),
        ("timeout -k 1 --signal=KILL 5 rm v", "rm v"),
        ("nice -5 rm v", "rm v"),
        ("nice --adj=3 rm v", "rm v"),
        ("ionice -c 3 rm v", "rm v"),
        ("taskset -c 1 rm v", "rm v"),
        ("chrt -b 0 rm v", "rm v"),
        ("setsid -f rm v", "rm v"),
        ("chronic -e rm v", "rm v"),
        ("env -u X -C /tmp TZ=UTC rm v", "rm v"),
        ("command -p rm v", "rm v"),
        ("exec -a x rm v", "rm v"),
        ("nohup busybox timeout 5 rm v", "rm v"),
    ] {
        let analysis = analyze(command);
        assert_eq!(analysis.unanalyzable, None, "{command}");
        assert!(analysis.commands.iter().any(|c| c.text == expected), "{command}: {:?}", analysis.commands);
    }
    // `xargs` alone runs `echo`; `flock F -c S` runs S.
    assert!(analyze("ls | xargs").commands.iter().any(|c| c.text == "echo"));
    assert!(analyze("flock /tmp/l -c 'rm v'").commands.iter().any(|c| c.text == "rm v"));
}
