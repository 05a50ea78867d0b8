//! A fetched HTML page as Markdown for the model (docs/reference/tools.md#web_fetch): the
//! page's main content (its `<main>`, else its first `<article>`, else its `<body>`), headings,
//! lists, tables, code and links kept; scripts, styles, `<noscript>`, navigation, forms and
//! embedded frames and images' data dropped. The conversion is htmd's (a turndown.js port
//! over html5ever, the HTML5 parser browsers' rules describe).

use std::rc::Rc;

use htmd::{HtmlToMarkdown, Node};
use markup5ever_rcdom::NodeData;

/// Elements whose content is not text a reader sees.
const DROPPED: &[&str] =
    &["script", "style", "noscript", "nav", "template", "iframe", "object", "embed", "svg", "canvas", "form", "head"];

/// A page turned into Markdown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkdownPage {
    /// The text of the page's `<title>`, whitespace collapsed, if it has one.
    pub title: Option<String>,
    /// The main content as Markdown.
    pub markdown: String,
}

/// Converts `html` (a whole document or a fragment).
pub fn html_to_markdown(html: &str) -> MarkdownPage {
    if nesting_estimate(html) > MAX_NESTING {
        return MarkdownPage { title: None, markdown: strip_tags(html) };
    }
    let converter = HtmlToMarkdown::builder().skip_tags(DROPPED.to_vec()).build();
    let Ok(tree) = converter.html_to_tree(html) else {
        return MarkdownPage { title: None, markdown: String::new() };
    };
    let title = find(&tree, "title").map(|node| text_of(&node)).filter(|t| !t.is_empty());
    let main = find(&tree, "main").or_else(|| find(&tree, "article")).or_else(|| find(&tree, "body"));
    // The document must outlive `main`: dropping it empties every node below it.
    let main = main.unwrap_or_else(|| Rc::clone(&tree));
    flatten_below(&main, MAX_DEPTH);
    let markdown = converter.tree_to_markdown(&main);
    MarkdownPage { title, markdown }
}

/// The deepest nesting (by [`nesting_estimate`]) parsed as HTML. The HTML parser's work grows
/// with the square of the nesting (each element looks through the open ones), so a hostile page
/// of a million nested `<div>`s would keep it busy for hours; such a page is shown as its text
/// with the tags taken out ([`strip_tags`]).
const MAX_NESTING: usize = 1_000;

/// Elements that never hold others, or whose end tag may be left out (closed by the next
/// one): not counted as nesting.
const UNCOUNTED: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr", "param",
    "keygen", "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "thead", "tbody", "tfoot", "colgroup",
    "caption", "rb", "rt", "rp", "html", "head", "body", "!doctype",
];

/// The most elements open at once, counting start tags against end tags in one pass over the
/// text (not exact HTML: an overestimate only makes a page be shown as text).
fn nesting_estimate(html: &str) -> usize {
    let bytes = html.as_bytes();
    let (mut depth, mut deepest) = (0usize, 0usize);
    for at in memchr::memchr_iter(b'<', bytes) {
        let rest = &bytes[at + 1..];
        let closing = rest.first() == Some(&b'/');
        let name_start = usize::from(closing);
        let name_len = rest[name_start..].iter().take_while(|b| b.is_ascii_alphanumeric() || **b == b'!').count();
        if name_len == 0 {
            continue;
        }
        let name = &rest[name_start..name_start + name_len];
        if UNCOUNTED.iter().any(|uncounted| uncounted.as_bytes().eq_ignore_ascii_case(name)) {
            continue;
        }
        if closing {
            depth = depth.saturating_sub(1);
        } else {
            depth += 1;
            deepest = deepest.max(depth);
        }
    }
    deepest
}

/// The text of `html` without its tags, whitespace collapsed (in one linear pass).
fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The deepest nesting converted as it is: the conversion recurses once per level, so a
/// hostile page nested a hundred thousand levels deep would overflow the stack. Below this
/// depth an element keeps only its text.
const MAX_DEPTH: usize = 200;

/// Replaces the children of every node `depth` levels below `root` by the text nodes under
/// them, in document order (iteratively).
fn flatten_below(root: &Rc<Node>, depth: usize) {
    let mut stack = vec![(Rc::clone(root), 0)];
    while let Some((node, level)) = stack.pop() {
        if level < depth {
            stack.extend(node.children.borrow().iter().map(|child| (Rc::clone(child), level + 1)));
            continue;
        }
        let mut texts = Vec::new();
        let mut below: Vec<Rc<Node>> = node.children.borrow().iter().rev().cloned().collect();
        while let Some(descendant) = below.pop() {
            if matches!(descendant.data, NodeData::Text { .. }) {
                texts.push(Rc::clone(&descendant));
            }
            below.extend(descendant.children.borrow().iter().rev().cloned());
        }
        *node.children.borrow_mut() = texts;
    }
}

/// The first element named `tag` in document order (iteratively: a page nested ten thousand
/// levels deep must not overflow the stack).
fn find(root: &Rc<Node>, tag: &str) -> Option<Rc<Node>> {
    let mut stack = vec![Rc::clone(root)];
    while let Some(node) = stack.pop() {
        if let NodeData::Element { name, .. } = &node.data
            && name.local.as_ref() == tag
        {
            return Some(node);
        }
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
    None
}

/// The text inside `node`, whitespace collapsed.
fn text_of(node: &Rc<Node>) -> String {
    let mut text = String::new();
    let mut stack = vec![Rc::clone(node)];
    while let Some(node) = stack.pop() {
        if let NodeData::Text { contents } = &node.data {
            text.push_str(&contents.borrow());
            text.push(' ');
        }
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_main_content_is_kept_with_its_links_and_the_rest_dropped() {
        let page = html_to_markdown(
            "<html><head><title> The  Title </title><style>p{}</style><script>alert('x')</script></head>\
             <body><nav><a href='/home'>Home</a></nav><main><h1>Heading</h1><p>Read <a href='https://docs.rs/x'>the \
             docs</a>.</p><ul><li>one</li><li>two</li></ul><script>evil()</script><noscript>enable js</noscript>\
             </main><footer>foot</footer></body></html>",
        );
        assert_eq!(page.title.as_deref(), Some("The Title"));
        assert!(page.markdown.contains("# Heading"), "{}", page.markdown);
        assert!(page.markdown.contains("[the docs](https://docs.rs/x)"), "{}", page.markdown);
        assert!(page.markdown.contains("*   one") || page.markdown.contains("- one"), "{}", page.markdown);
        for gone in ["alert", "evil", "enable js", "Home", "foot", "p{}"] {
            assert!(!page.markdown.contains(gone), "{gone} in {}", page.markdown);
        }
    }

    #[test]
    fn without_main_an_article_then_the_body_is_taken() {
        let article = html_to_markdown("<body><div>aside</div><article><p>story</p></article></body>");
        assert_eq!(article.markdown, "story");
        let body = html_to_markdown("<body><nav>menu</nav><p>just <b>text</b></p></body>");
        assert_eq!(body.markdown, "just **text**");
        assert_eq!(body.title, None);
    }

    #[test]
    fn a_deeply_nested_or_broken_page_does_not_crash() {
        // Nested past what is parsed: shown as text, at once.
        let started = std::time::Instant::now();
        let deep = "<div>".repeat(1_000_000) + "bottom";
        assert_eq!(html_to_markdown(&deep).markdown, "bottom");
        // Linear: seconds even in a debug build on a loaded machine (parsed, it would be hours).
        assert!(started.elapsed() < std::time::Duration::from_secs(60), "{:?}", started.elapsed());
        // Deep but parsed: below the conversion's depth an element keeps its text.
        let deep = "<div><b>".repeat(450) + "bottom" + &"</b></div>".repeat(450);
        assert!(html_to_markdown(&deep).markdown.contains("bottom"));
        // Many elements that close themselves are no nesting.
        let flat = "<p>para".repeat(5_000);
        assert!(html_to_markdown(&flat).markdown.starts_with("para"));
        assert!(html_to_markdown("<p>unclosed <a href='x'>link <table><tr><td>cell").markdown.contains("cell"));
        assert_eq!(html_to_markdown("").markdown, "");
    }
}
