//! The xml format (docs/reference/formats.md#xml): both forms, the lenient scanner, typed arguments.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_calls::{ParsedCall, TextFormat, parse};

fn calls(text: &str) -> Vec<ParsedCall> {
    let tools = support::test_tools();
    let whole = parse(TextFormat::Xml, text, &tools);
    for sizes in [&[1][..], &[2], &[3], &[5], &[7, 1, 13]] {
        assert_eq!(support::parse_chunked(TextFormat::Xml, text, &tools, sizes), whole, "chunks {sizes:?} of {text:?}");
    }
    whole
}

fn summary(text: &str) -> Vec<(String, Value, Option<String>)> {
    calls(text).into_iter().map(|c| (c.name, Value::Object(c.args), c.parse_error)).collect()
}

fn ok(name: &str, args: Value) -> (String, Value, Option<String>) {
    (name.to_owned(), args, None)
}

fn invoke(name: &str, params: &[(&str, &str)]) -> String {
    let params: String = params.iter().map(|(p, v)| format!("<parameter name=\"{p}\">{v}</parameter>\n")).collect();
    format!("<function_calls>\n<invoke name=\"{name}\">\n{params}</invoke>\n</function_calls>\n")
}

#[test]
fn function_calls_with_invoke_and_parameters() {
    let text = "Let me look.\n<function_calls>\n<invoke name=\"read_file\" id=\"r1\">\n<parameter name=\"path\">src/main.rs</parameter>\n<parameter name=\"limit\">20</parameter>\n</invoke>\n<invoke name=\"bash\">\n<parameter name=\"command\">ls</parameter>\n</invoke>\n</function_calls>\n";
    let found = calls(text);
    assert_eq!(
        found.iter().map(|c| (c.name.as_str(), c.id.as_str(), Value::Object(c.args.clone()))).collect::<Vec<_>>(),
        vec![
            ("read_file", "r1", json!({"path": "src/main.rs", "limit": 20})),
            ("bash", "call_1_2", json!({"command": "ls"}))
        ]
    );
    // Each call starts at its own tag.
    assert_eq!(found[0].start, text.find("<invoke").unwrap());
    assert_eq!(found[1].start, text.rfind("<invoke").unwrap());
    assert_eq!(found[1].end, text.rfind("</invoke>").unwrap() + "</invoke>".len());
}

#[test]
fn repeated_calls_to_one_tool_have_their_own_starts() {
    let text = "<function_calls>\n<invoke name=\"bash\"><parameter name=\"command\">a</parameter></invoke>\n<invoke name=\"bash\"><parameter name=\"command\">b</parameter></invoke>\n</function_calls>";
    let starts: Vec<usize> = calls(text).iter().map(|c| c.start).collect();
    assert_eq!(starts, vec![text.find("<invoke").unwrap(), text.rfind("<invoke").unwrap()]);
}

#[test]
fn tool_use_with_attributes_children_and_bodies() {
    let text = "<tool-use>\n<bash>\nls -la\n</bash>\n<save path=\"a.txt\">hello\nworld\n</save>\n<read_file>\n<path>b.txt</path>\n<offset>3</offset>\n</read_file>\n<read_file>{\"path\": \"c.txt\"}</read_file>\n<read_file path=\"d.txt\"/>\n</tool-use>\n";
    assert_eq!(
        summary(text),
        vec![
            ok("bash", json!({"command": "ls -la"})),
            ok("save", json!({"path": "a.txt", "content": "hello\nworld\n"})),
            ok("read_file", json!({"path": "b.txt", "offset": 3})),
            ok("read_file", json!({"path": "c.txt"})),
            ok("read_file", json!({"path": "d.txt"})),
        ]
    );
}

#[test]
fn a_body_with_markup_that_is_not_parameters_is_the_body() {
    let text = "<tool-use><save path=\"index.html\"><html><body>hi</body></html></save></tool-use>";
    assert_eq!(
        summary(text),
        vec![ok("save", json!({"path": "index.html", "content": "<html><body>hi</body></html>"}))]
    );
    // gptme's own rendering writes the langtag words as `args`.
    let text = "<tool-use>\n<save args=\"notes.md\">\n# Notes\n</save>\n</tool-use>";
    assert_eq!(summary(text), vec![ok("save", json!({"path": "notes.md", "content": "# Notes"}))]);
}

#[test]
fn parameter_text_is_raw_up_to_the_first_closing_tag() {
    let text = invoke("bash", &[("command", "test a < b && cat <file> | grep '>'")]);
    assert_eq!(summary(&text), vec![ok("bash", json!({"command": "test a < b && cat <file> | grep '>'"}))]);
    let text = invoke("save", &[("path", "x"), ("content", "<![CDATA[a </parameter> b]]>")]);
    assert_eq!(summary(&text), vec![ok("save", json!({"path": "x", "content": "a </parameter> b"}))]);
    let text =
        invoke("save", &[("path", "x"), ("content", "&lt;p&gt; &amp;&amp; &quot;&apos; &#65;&#x42; &nbsp; &copy;")]);
    assert_eq!(summary(&text), vec![ok("save", json!({"path": "x", "content": "<p> && \"' AB &nbsp; &copy;"}))]);
}

#[test]
fn only_text_with_a_wrapper_is_parsed() {
    assert_eq!(summary("<invoke name=\"bash\"><parameter name=\"command\">ls</parameter></invoke>"), vec![]);
    assert_eq!(summary("<bash>ls</bash>"), vec![]);
    // Markdown blocks are not calls in this format.
    assert_eq!(summary("```bash\nls\n```\n"), vec![]);
}

#[test]
fn xml_inside_a_code_fence_is_an_example() {
    let example = invoke("bash", &[("command", "rm -rf /")]);
    let text = format!("For example:\n```xml\n{example}```\n\nNow for real:\n{}", invoke("bash", &[("command", "ls")]));
    assert_eq!(summary(&text), vec![ok("bash", json!({"command": "ls"}))]);
}

#[test]
fn a_fence_inside_a_parameter_does_not_open_a_block() {
    let content = "\n# Readme\n```python\nprint(1)\n```\n";
    let text = format!(
        "{}\n{}",
        invoke("save", &[("path", "README.md"), ("content", content)]),
        invoke("bash", &[("command", "ls")])
    );
    assert_eq!(
        summary(&text),
        vec![
            ok("save", json!({"path": "README.md", "content": "# Readme\n```python\nprint(1)\n```\n"})),
            ok("bash", json!({"command": "ls"}))
        ]
    );
}

#[test]
fn string_parameters_drop_the_newlines_they_are_written_with() {
    let text = invoke("save", &[("path", "\nfoo.txt\n"), ("content", "\nline1\nline2\n")]);
    assert_eq!(summary(&text), vec![ok("save", json!({"path": "foo.txt", "content": "line1\nline2\n"}))]);
}

#[test]
fn parameters_are_typed_by_the_schema() {
    let text = invoke(
        "typed",
        &[
            ("text", " spaced "),
            ("count", " 42 "),
            ("ratio", "0.5"),
            ("flag", "Yes"),
            ("items", "[\"a\", \"b\"]"),
            ("options", "{\"k\": 1}"),
            ("either", "7"),
            ("choice", "b"),
            ("anything", "[1]"),
        ],
    );
    assert_eq!(
        summary(&text),
        vec![ok(
            "typed",
            json!({"text": " spaced ", "count": 42, "ratio": 0.5, "flag": true, "items": ["a", "b"], "options": {"k": 1}, "either": 7, "choice": "b", "anything": [1]})
        )]
    );
    for (flag, value) in [("true", true), ("FALSE", false), ("1", true), ("0", false), ("no", false)] {
        let text = invoke("typed", &[("text", "t"), ("flag", flag)]);
        assert_eq!(summary(&text), vec![ok("typed", json!({"text": "t", "flag": value}))], "{flag}");
    }
    // A union takes the text as a string when it is not JSON of an allowed type.
    let text = invoke("typed", &[("text", "t"), ("either", "seven"), ("anything", "plain words")]);
    assert_eq!(summary(&text), vec![ok("typed", json!({"text": "t", "either": "seven", "anything": "plain words"}))]);
}

#[test]
fn empty_optional_parameters_are_absent_and_unknown_ones_are_strings() {
    let text = invoke("read_file", &[("path", "a"), ("limit", " "), ("mode", "fast"), ("depth", "3")]);
    assert_eq!(summary(&text), vec![ok("read_file", json!({"path": "a", "mode": "fast", "depth": "3"}))]);
}

#[test]
fn a_conversion_failure_is_a_parse_error_on_that_parameter() {
    let text = invoke("bash", &[("command", "sleep 200"), ("timeout", "two minutes")]);
    let [call] = calls(&text).try_into().unwrap();
    assert_eq!(call.parse_error.as_deref(), Some("Parameter `timeout` should be integer (got \"two minutes\")"));
    let text = invoke("typed", &[("text", "t"), ("flag", "maybe"), ("items", "[1,")]);
    let [call] = calls(&text).try_into().unwrap();
    assert_eq!(
        call.parse_error.as_deref(),
        Some("Parameter `flag` should be boolean (got \"maybe\"); Parameter `items` should be array (got \"[1,\")")
    );
    let text = invoke("typed", &[("text", "t"), ("count", "2.5")]);
    assert_eq!(calls(&text)[0].parse_error.as_deref(), Some("Parameter `count` should be integer (got \"2.5\")"));
}

#[test]
fn an_unknown_tool_is_still_a_call() {
    let text = invoke("frobnicate", &[("x", "1")]);
    assert_eq!(summary(&text), vec![ok("frobnicate", json!({"x": "1"}))]);
    let text = "<function_calls><invoke><parameter name=\"x\">1</parameter></invoke></function_calls>";
    assert_eq!(
        summary(text),
        vec![(
            "".into(),
            json!({"x": "1"}),
            Some("An <invoke> element needs the tool's name: <invoke name=\"TOOL\">".into())
        )]
    );
}

#[test]
fn names_resolve_through_aliases() {
    assert_eq!(summary(&invoke("Read", &[("path", "a")])), vec![ok("read_file", json!({"path": "a"}))]);
}

#[test]
fn a_call_is_complete_at_its_own_closing_tag() {
    // No closing wrapper yet: the call is still complete (needed for streaming).
    let text = "<function_calls>\n<invoke name=\"bash\">\n<parameter name=\"command\">ls</parameter>\n</invoke>\n";
    assert_eq!(summary(text), vec![ok("bash", json!({"command": "ls"}))]);
    // A start tag cut off is not a call.
    assert_eq!(summary("<function_calls>\n<invoke name=\"bash\""), vec![]);
    assert_eq!(summary("<tool-use><bash"), vec![]);
}

fn malformed(name: &str, args: Value, error: &str) -> (String, Value, Option<String>) {
    (name.to_owned(), args, Some(error.to_owned()))
}

#[test]
fn a_call_cut_off_after_its_start_tag_is_a_malformed_call() {
    let no_invoke_close = "The <invoke> element has no closing </invoke>";
    assert_eq!(
        summary("<function_calls>\n<invoke name=\"bash\">\n<parameter name=\"command\">ls</parameter>\n"),
        vec![malformed("bash", json!({"command": "ls"}), no_invoke_close)]
    );
    assert_eq!(
        summary(
            "<function_calls>\n<invoke name=\"bash\">\n<parameter name=\"command\">ls</parameter>\n</function_calls>\n"
        ),
        vec![malformed("bash", json!({"command": "ls"}), no_invoke_close)]
    );
    assert_eq!(
        summary("<function_calls><invoke name=\"bash\"><parameter name=\"command\">ls -la"),
        vec![malformed(
            "bash",
            json!({"command": "ls -la"}),
            &format!("Parameter `command` has no closing </parameter>; {no_invoke_close}")
        )]
    );
    assert_eq!(
        summary("<function_calls><invoke name=\"bash\"><parameter name=\"command\""),
        vec![malformed("bash", json!({}), no_invoke_close)]
    );
    assert_eq!(
        summary("<tool-use><bash>ls</bas"),
        vec![malformed("bash", json!({"command": "ls</bas"}), "The <bash> element has no closing </bash>")]
    );
}

#[test]
fn a_missing_closing_tag_does_not_swallow_the_calls_after_it() {
    let pwd = "<invoke name=\"bash\"><parameter name=\"command\">pwd</parameter></invoke>";
    // No </parameter>: the value ends at </invoke>.
    let text = format!(
        "<function_calls>\n<invoke name=\"bash\"><parameter name=\"command\">ls</invoke>\n{pwd}\n</function_calls>"
    );
    assert_eq!(
        summary(&text),
        vec![
            malformed("bash", json!({"command": "ls"}), "Parameter `command` has no closing </parameter>"),
            ok("bash", json!({"command": "pwd"}))
        ]
    );
    let found = calls(&text);
    assert_eq!(found[0].end, text.find("</invoke>").unwrap() + "</invoke>".len());
    assert_eq!(found[1].start, text.rfind("<invoke").unwrap());
    // No </parameter> and no </invoke>: both end at the next <invoke.
    let text =
        format!("<function_calls>\n<invoke name=\"bash\"><parameter name=\"command\">ls\n{pwd}\n</function_calls>");
    assert_eq!(
        summary(&text),
        vec![
            malformed(
                "bash",
                json!({"command": "ls"}),
                "Parameter `command` has no closing </parameter>; The <invoke> element has no closing </invoke>"
            ),
            ok("bash", json!({"command": "pwd"}))
        ]
    );
    assert_eq!(calls(&text)[0].end, text.rfind("<invoke").unwrap());
    // No </invoke>: the call ends at the next <invoke, which is a call of its own.
    let text = format!(
        "<function_calls>\n<invoke name=\"bash\"><parameter name=\"command\">ls</parameter>\n{pwd}\n</function_calls>"
    );
    assert_eq!(
        summary(&text),
        vec![
            malformed("bash", json!({"command": "ls"}), "The <invoke> element has no closing </invoke>"),
            ok("bash", json!({"command": "pwd"}))
        ]
    );
    // The wrapper's closing tag ends a parameter and its call; the next wrapper is read.
    let text = format!(
        "<function_calls><invoke name=\"bash\"><parameter name=\"command\">ls</function_calls>\n<function_calls>{pwd}</function_calls>"
    );
    assert_eq!(summary(&text)[1], ok("bash", json!({"command": "pwd"})));
    assert_eq!(summary(&text).len(), 2);
    // <tool-use> children end at the wrapper's tags.
    let text = "<tool-use>\n<bash>ls\n</tool-use>\n<tool-use>\n<bash>date</bash>";
    assert_eq!(
        summary(text),
        vec![
            malformed("bash", json!({"command": "ls"}), "The <bash> element has no closing </bash>"),
            ok("bash", json!({"command": "date"}))
        ]
    );
    let text = "<tool-use>\n<bash>ls\n<tool-use>\n<bash>date</bash></tool-use>";
    assert_eq!(summary(text)[1], ok("bash", json!({"command": "date"})));
    // A parameter element inside a <tool-use> child without its closing tag.
    let text = "<tool-use><read_file><path>a.txt</read_file>\n<bash>ls</bash></tool-use>";
    assert_eq!(
        summary(text),
        vec![
            malformed("read_file", json!({"path": "a.txt"}), "Parameter `path` has no closing </path>"),
            ok("bash", json!({"command": "ls"}))
        ]
    );
}

#[test]
fn tags_that_end_a_value_early_are_text_inside_cdata_or_as_other_names() {
    let text = invoke(
        "save",
        &[("path", "x"), ("content", "<![CDATA[</invoke>\n<invoke name=\"bash\"> </function_calls>]]>")],
    );
    assert_eq!(
        summary(&text),
        vec![ok("save", json!({"path": "x", "content": "</invoke>\n<invoke name=\"bash\"> </function_calls>"}))]
    );
    let text = invoke("save", &[("path", "x"), ("content", "<invoker> <invoke_all> </invoked>")]);
    assert_eq!(summary(&text), vec![ok("save", json!({"path": "x", "content": "<invoker> <invoke_all> </invoked>"}))]);
    let text = "<tool-use><save path=\"x\"><![CDATA[</tool-use>]]></save></tool-use>";
    assert_eq!(summary(text), vec![ok("save", json!({"path": "x", "content": "</tool-use>"}))]);
}

#[test]
fn tool_use_children_not_in_the_schema_are_passed_as_strings() {
    // A JSON-body tool: every child element is a parameter; validation reports the unknown one.
    let text = "<tool-use><read_file><file_path>a.txt</file_path><limit>3</limit></read_file></tool-use>";
    assert_eq!(summary(text), vec![ok("read_file", json!({"file_path": "a.txt", "limit": 3}))]);
    // A tool with a body: once one child names a parameter, all are parameters.
    let text = "<tool-use><save><path>a.txt</path><contents>hi</contents></save></tool-use>";
    assert_eq!(summary(text), vec![ok("save", json!({"path": "a.txt", "contents": "hi"}))]);
    // …and markup that names none is the body.
    let text = "<tool-use><save path=\"a.html\"><p>hi</p></save></tool-use>";
    assert_eq!(summary(text), vec![ok("save", json!({"path": "a.html", "content": "<p>hi</p>"}))]);
}

#[test]
fn broken_xml_around_good_calls_still_yields_the_good_ones() {
    let text = "<function_calls>\n<invoke name=\"bash\"><parameter name=\"command\">ls</parameter></invoke>\n<invoke name=\"bash\" <<< <parameter name=\"command\">pwd</parameter></invoke>\n</function_calls>\n<tool-use><<bash>date</bash></tool-use>";
    assert_eq!(
        summary(text),
        vec![
            ok("bash", json!({"command": "ls"})),
            ok("bash", json!({"command": "pwd"})),
            ok("bash", json!({"command": "date"}))
        ]
    );
}
