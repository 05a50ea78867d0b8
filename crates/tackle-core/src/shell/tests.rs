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
        "cargo metadata --format-version 1",
        "cargo tree -e normal",
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
        "echo $(rm -rf /)",
        "echo `touch x`",
        "ls && touch x",
        "ls; npm install",
        "ls | xargs rm",
        "$CMD args",
        "x=1",
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
        "cd src",
        "cat <<EOF\n$(rm x)\nEOF",
        "cat <<EOF\nx\nEOF\nrm y",
    ] {
        assert!(!is_read_only(command), "should not be read-only: {command}");
    }
}
