//! Extraction, one test per language row of docs/ckg.md's table (what becomes a function, a
//! class, a method and its parent), plus the Trae bugs the table fixes, relations, and
//! hostile input.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use tackle_ckg::Language;
use tackle_ckg::extract::{Extraction, Kind, RefKind, Tagger, extract};

fn run(language: Language, path: &str, source: &str) -> Extraction {
    extract(&mut Tagger::new(), language, path, source.as_bytes(), None).unwrap()
}

/// `(kind, name, parent)` of every definition, in source order.
fn defs(extraction: &Extraction) -> Vec<(Kind, String, Option<String>)> {
    extraction.symbols.iter().map(|s| (s.kind, s.name.clone(), s.parent.clone())).collect()
}

fn has(extraction: &Extraction, kind: Kind, name: &str, parent: Option<&str>) -> bool {
    extraction.symbols.iter().any(|s| s.kind == kind && s.name == name && s.parent.as_deref() == parent)
}

#[track_caller]
fn expect(extraction: &Extraction, kind: Kind, name: &str, parent: Option<&str>) {
    assert!(has(extraction, kind, name, parent), "no {kind:?} {name} (parent {parent:?}) in {:#?}", defs(extraction));
}

#[track_caller]
fn expect_none(extraction: &Extraction, name: &str) {
    assert!(
        !extraction.symbols.iter().any(|s| s.name == name),
        "{name} should not be a definition: {:#?}",
        defs(extraction)
    );
}

fn symbol<'a>(extraction: &'a Extraction, kind: Kind, name: &str) -> &'a tackle_ckg::extract::Symbol {
    extraction.symbols.iter().find(|s| s.kind == kind && s.name == name).unwrap_or_else(|| panic!("no {kind:?} {name}"))
}

fn refs(extraction: &Extraction, kind: RefKind) -> Vec<(String, Option<String>)> {
    extraction
        .references
        .iter()
        .filter(|r| r.kind == kind)
        .map(|r| (r.name.clone(), r.from.map(|i| extraction.symbols[i].qualified.clone())))
        .collect()
}

const PYTHON: &str = r#"import os
from pkg.util import helper

class Base:
    pass

class Shape(Base):
    """A shape."""
    sides = 0

    def __init__(self, n):
        self.n = n

    @property
    def area(self):
        return helper(self.n)

    @staticmethod
    def make():
        def inner():
            return Shape(3)
        return inner()

def free(x):
    def nested():
        return x
    return nested()
"#;

#[test]
fn python_defs_classes_methods_and_nested_functions() {
    let x = run(Language::Python, "geo/shapes.py", PYTHON);
    expect(&x, Kind::Class, "Base", None);
    expect(&x, Kind::Class, "Shape", None);
    expect(&x, Kind::Method, "__init__", Some("Shape"));
    expect(&x, Kind::Method, "area", Some("Shape"));
    expect(&x, Kind::Method, "make", Some("Shape"));
    expect(&x, Kind::Function, "inner", Some("make"));
    expect(&x, Kind::Function, "free", None);
    expect(&x, Kind::Function, "nested", Some("free"));
    expect(&x, Kind::Field, "sides", Some("Shape"));
    let area = symbol(&x, Kind::Method, "area");
    assert_eq!(area.qualified, "geo.shapes.Shape.area");
    // A decorated definition starts at its decorator; its signature names it.
    assert_eq!((area.start_line, area.end_line, area.name_line), (14, 16, 15));
    assert_eq!(area.signature, "def area(self)");
    assert_eq!(symbol(&x, Kind::Class, "Shape").doc.as_deref(), Some("A shape."));
    assert_eq!(symbol(&x, Kind::Function, "inner").qualified, "geo.shapes.Shape.make.inner");
    assert!(refs(&x, RefKind::Call).contains(&("helper".into(), Some("geo.shapes.Shape.area".into()))));
    assert!(refs(&x, RefKind::Inherits).contains(&("Base".into(), Some("geo.shapes.Shape".into()))));
    assert_eq!(refs(&x, RefKind::Import), [("os".into(), None), ("pkg.util".into(), None)]);
    assert!(!x.partial);
}

const RUST: &str = r#"use std::fmt;

/// A point.
pub struct Point { x: i32, y: i32 }
enum Shape { Circle, Square }
union Bits { i: u32, f: f32 }
pub trait Area {
    fn area(&self) -> f64;
    fn name(&self) -> String { String::new() }
}
type Alias = Point;

impl Point {
    pub fn new() -> Self { helper(); Point { x: 0, y: 0 } }
}

impl Area for Point {
    fn area(&self) -> f64 { 0.0 }
}

impl<T> fmt::Display for Wrapper<T> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
}

fn helper() {}

mod inner {
    fn private() {}
}
"#;

#[test]
fn rust_fns_structs_traits_and_impl_methods() {
    let x = run(Language::Rust, "src/geo.rs", RUST);
    expect(&x, Kind::Class, "Point", None);
    expect(&x, Kind::Class, "Shape", None);
    expect(&x, Kind::Class, "Bits", None);
    expect(&x, Kind::Interface, "Area", None);
    expect(&x, Kind::Method, "area", Some("Area"));
    expect(&x, Kind::Method, "name", Some("Area"));
    expect(&x, Kind::Method, "new", Some("Point"));
    expect(&x, Kind::Method, "area", Some("Point"));
    expect(&x, Kind::Method, "fmt", Some("Wrapper"));
    expect(&x, Kind::Function, "helper", None);
    expect(&x, Kind::Function, "private", Some("inner"));
    expect(&x, Kind::Type, "Alias", None);
    expect(&x, Kind::Field, "x", Some("Point"));
    assert_eq!(symbol(&x, Kind::Method, "new").qualified, "crate::geo::Point::new");
    assert_eq!(symbol(&x, Kind::Method, "new").signature, "pub fn new() -> Self");
    assert_eq!(symbol(&x, Kind::Class, "Point").doc.as_deref(), Some("A point."));
    assert_eq!(symbol(&x, Kind::Function, "private").qualified, "crate::geo::inner::private");
    let implements = refs(&x, RefKind::Implements);
    assert!(implements.contains(&("Area".into(), Some("crate::geo::Point".into()))), "{implements:?}");
    assert!(implements.contains(&("Display".into(), Some("crate::geo::Wrapper".into()))), "{implements:?}");
    assert!(refs(&x, RefKind::Call).contains(&("helper".into(), Some("crate::geo::Point::new".into()))));
}

const JAVASCRIPT: &str = r#"import { x } from './util';
function decl(a) { return a; }
function* gen() { yield 1; }
const arrow = (a) => a * 2;
let fexpr = function () {};
var old = () => {};
class Animal extends Base {
  legs = 4;
  #secret = 1;
  constructor(name) { this.name = name; }
  speak() { return decl(1); }
}
"#;

#[test]
fn javascript_functions_arrows_classes_fields_and_methods() {
    let x = run(Language::JavaScript, "zoo.js", JAVASCRIPT);
    for name in ["decl", "gen", "arrow", "fexpr", "old"] {
        expect(&x, Kind::Function, name, None);
    }
    expect(&x, Kind::Class, "Animal", None);
    expect(&x, Kind::Field, "legs", Some("Animal"));
    expect(&x, Kind::Field, "#secret", Some("Animal"));
    expect(&x, Kind::Method, "constructor", Some("Animal"));
    expect(&x, Kind::Method, "speak", Some("Animal"));
    assert_eq!(symbol(&x, Kind::Function, "arrow").signature, "const arrow = (a) =>");
    assert!(refs(&x, RefKind::Inherits).contains(&("Base".into(), Some("Animal".into()))));
    assert!(refs(&x, RefKind::Call).contains(&("decl".into(), Some("Animal.speak".into()))));
    assert_eq!(refs(&x, RefKind::Import), [("./util".into(), None)]);
}

const TYPESCRIPT: &str = r#"interface Shape {
  area(): number;
}
abstract class Base implements Shape {
  abstract area(): number;
  describe(): string { return "" }
}
class Square extends Base {
  side: number = 1;
  area() { return this.side ** 2 }
}
export const toArea = (s: Shape): number => s.area();
function total(shapes: Shape[]): number { return 0 }
"#;

#[test]
fn typescript_interfaces_abstract_classes_and_signatures() {
    for language in [Language::TypeScript, Language::Tsx] {
        let x = run(language, "shapes.ts", TYPESCRIPT);
        expect(&x, Kind::Interface, "Shape", None);
        expect(&x, Kind::Method, "area", Some("Shape"));
        expect(&x, Kind::Class, "Base", None);
        expect(&x, Kind::Method, "area", Some("Base"));
        expect(&x, Kind::Method, "describe", Some("Base"));
        expect(&x, Kind::Class, "Square", None);
        expect(&x, Kind::Field, "side", Some("Square"));
        expect(&x, Kind::Method, "area", Some("Square"));
        expect(&x, Kind::Function, "toArea", None);
        expect(&x, Kind::Function, "total", None);
        assert!(refs(&x, RefKind::Implements).contains(&("Shape".into(), Some("Base".into()))));
        assert!(refs(&x, RefKind::Inherits).contains(&("Base".into(), Some("Square".into()))));
    }
}

#[test]
fn tsx_uses_the_tsx_grammar() {
    let source = "const App = () => <div className=\"a\">{1}</div>;\nfunction Comp(props: P) { return <b/> }\nclass Widget extends React.Component { render() { return <i/> } }\n";
    let x = run(Language::Tsx, "app.tsx", source);
    expect(&x, Kind::Function, "App", None);
    expect(&x, Kind::Function, "Comp", None);
    expect(&x, Kind::Class, "Widget", None);
    expect(&x, Kind::Method, "render", Some("Widget"));
    assert!(!x.partial, "TSX parses with the tsx grammar");
    assert!(run(Language::TypeScript, "app.ts", source).partial, "the same text is not plain TypeScript");
}

const GO: &str = r#"package shapes

import "fmt"

type Point struct { X int }
type Shape interface { Area() float64 }
type Celsius float64

func New() *Point { return &Point{} }
func (p *Point) Area() float64 { fmt.Println(); return 0 }
func (p Point) String() string { return "" }
"#;

#[test]
fn go_funcs_types_and_receiver_methods() {
    let x = run(Language::Go, "shapes/point.go", GO);
    expect(&x, Kind::Class, "Point", None);
    expect(&x, Kind::Interface, "Shape", None);
    expect(&x, Kind::Method, "Area", Some("Shape"));
    expect(&x, Kind::Type, "Celsius", None);
    expect(&x, Kind::Function, "New", None);
    expect(&x, Kind::Method, "Area", Some("Point"));
    expect(&x, Kind::Method, "String", Some("Point"));
    assert_eq!(symbol(&x, Kind::Function, "New").qualified, "shapes.New");
    let area = x.symbols.iter().find(|s| s.name == "Area" && s.parent.as_deref() == Some("Point")).unwrap();
    assert_eq!(area.qualified, "shapes.Point.Area");
    assert_eq!(area.signature, "func (p *Point) Area() float64");
    assert_eq!(refs(&x, RefKind::Import), [("fmt".into(), None)]);
}

const JAVA: &str = r#"package com.acme;

import java.util.List;

public class Box extends Base implements Shape {
    private int size;
    public Box(int size) { this.size = size; }
    @Override
    public double area() { return helper(size); }
}
interface Shape { double area(); }
enum Color { RED; void paint() {} }
record Pair(int a, int b) {}
"#;

#[test]
fn java_classes_interfaces_enums_records_methods_and_constructors() {
    let x = run(Language::Java, "com/acme/Box.java", JAVA);
    expect(&x, Kind::Class, "Box", None);
    expect(&x, Kind::Interface, "Shape", None);
    expect(&x, Kind::Class, "Color", None);
    expect(&x, Kind::Class, "Pair", None);
    expect(&x, Kind::Method, "Box", Some("Box"));
    expect(&x, Kind::Method, "area", Some("Box"));
    expect(&x, Kind::Method, "area", Some("Shape"));
    expect(&x, Kind::Method, "paint", Some("Color"));
    expect(&x, Kind::Field, "size", Some("Box"));
    let area = x.symbols.iter().find(|s| s.name == "area" && s.parent.as_deref() == Some("Box")).unwrap();
    assert_eq!(area.qualified, "com.acme.Box.area");
    assert_eq!(area.signature, "public double area()");
    assert!(refs(&x, RefKind::Inherits).contains(&("Base".into(), Some("com.acme.Box".into()))));
    assert!(refs(&x, RefKind::Implements).contains(&("Shape".into(), Some("com.acme.Box".into()))));
}

const C: &str = r#"#include <stdio.h>
struct point { int x; int y; };
union value { int i; float f; };
struct point origin;
int add(int a, int b);
int add(int a, int b) { return a + b; }
int *ptrfn(int a) { return 0; }
static char **names(void) { return 0; }
typedef struct { int w; } size;
"#;

#[test]
fn c_function_definitions_structs_and_unions_with_a_body() {
    let x = run(Language::C, "math.c", C);
    expect(&x, Kind::Class, "point", None);
    expect(&x, Kind::Class, "value", None);
    expect(&x, Kind::Function, "ptrfn", None);
    expect(&x, Kind::Function, "names", None);
    expect(&x, Kind::Type, "size", None);
    let adds: Vec<_> = x.symbols.iter().filter(|s| s.name == "add").collect();
    assert_eq!(adds.len(), 1, "the prototype is not a definition: {:#?}", defs(&x));
    assert_eq!((adds[0].start_line, adds[0].kind), (6, Kind::Function));
    assert_eq!(x.symbols.iter().filter(|s| s.name == "point").count(), 1, "a use of struct point is not a definition");
    assert_eq!(refs(&x, RefKind::Import), [("stdio.h".into(), None)]);
}

const CPP: &str = r#"#include "shape.h"
namespace geo {
class Shape {
 public:
  virtual double area() const = 0;
  int id() const { return 1; }
};
struct Square : public Shape {
  double side;
  double area() const override { return side * side; }
};
double Circle::area() const { return 3.14; }
int *ptrfn(int a) { return nullptr; }
int &ref(int &a) { return a; }
class Forward;
class Handle {
 public:
  Handle() = default;
  explicit Handle(int fd) : fd_(fd) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { close(); }
};
}
"#;

#[test]
fn cpp_functions_classes_in_class_and_qualified_methods() {
    let x = run(Language::Cpp, "geo.cpp", CPP);
    expect(&x, Kind::Module, "geo", None);
    expect(&x, Kind::Class, "Shape", Some("geo"));
    expect(&x, Kind::Class, "Square", Some("geo"));
    expect(&x, Kind::Method, "id", Some("Shape"));
    expect(&x, Kind::Method, "area", Some("Square"));
    expect(&x, Kind::Method, "area", Some("Circle"));
    expect(&x, Kind::Function, "ptrfn", Some("geo"));
    expect(&x, Kind::Function, "ref", Some("geo"));
    expect(&x, Kind::Field, "side", Some("Square"));
    expect_none(&x, "Forward");
    assert_eq!(
        x.symbols.iter().filter(|s| s.name == "area").count(),
        2,
        "the pure virtual declaration is not a definition"
    );
    assert_eq!(symbol(&x, Kind::Method, "id").qualified, "geo::Shape::id");
    let handle: Vec<_> = defs(&x).into_iter().filter(|(_, _, parent)| parent.as_deref() == Some("Handle")).collect();
    assert_eq!(
        handle,
        [
            (Kind::Method, "Handle".to_owned(), Some("Handle".to_owned())),
            (Kind::Method, "~Handle".to_owned(), Some("Handle".to_owned()))
        ],
        "a constructor defined in the class is a method; `= default` and `= delete` define no body"
    );
    let circle = x.symbols.iter().find(|s| s.parent.as_deref() == Some("Circle")).unwrap();
    assert_eq!(circle.qualified, "geo::Circle::area");
    assert!(refs(&x, RefKind::Inherits).contains(&("Shape".into(), Some("geo::Square".into()))));
}

const CPP_IDIOMS: &str = r#"template <typename T>
class Box<T*> {
 public:
  explicit operator bool() const { return ptr_ != nullptr; }
  void Lock() ABSL_LOCKS_EXCLUDED(mu_) { mu_.lock(); }
  bool Held() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return true;
  }
  operator ::testing::Matcher<T>() const { return {}; }
 private:
  T* ptr_;
};
template <>
struct Traits<int> {};
Box::operator Action<R(Args...)>() const { return {}; }
void Registry::Clear()
    ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
  entries_.clear();
}
int Count() ABSL_LOCKS_EXCLUDED(mu_) { return 0; }
"#;

#[test]
fn cpp_specializations_conversion_operators_and_annotation_macros() {
    let x = run(Language::Cpp, "box.h", CPP_IDIOMS);
    expect(&x, Kind::Class, "Box", None);
    expect(&x, Kind::Class, "Traits", None);
    expect(&x, Kind::Method, "operator bool", Some("Box"));
    expect(&x, Kind::Method, "Lock", Some("Box"));
    expect(&x, Kind::Method, "Held", Some("Box"));
    expect(&x, Kind::Method, "operator ::testing::Matcher<T>", Some("Box"));
    expect(&x, Kind::Method, "operator Action<R(Args...)>", Some("Box"));
    expect(&x, Kind::Method, "Clear", Some("Registry"));
    expect(&x, Kind::Function, "Count", None);
    for r#macro in ["ABSL_LOCKS_EXCLUDED", "ABSL_EXCLUSIVE_LOCKS_REQUIRED"] {
        expect_none(&x, r#macro);
    }
    let clear = symbol(&x, Kind::Method, "Clear");
    assert_eq!((clear.start_line, clear.end_line, clear.qualified.as_str()), (17, 20, "Registry::Clear"));
    assert_eq!(symbol(&x, Kind::Method, "Lock").signature, "void Lock() ABSL_LOCKS_EXCLUDED(mu_)");
}

// --- The Trae bugs of issue 17 -------------------------------------------------------------

#[test]
fn trae_bug_javascript_and_typescript_free_and_arrow_functions_are_found() {
    let source = "export default function main() {}\nconst add = (a, b) => a + b;\nexport const sub = function (a, b) { return a - b };\n";
    for language in [Language::JavaScript, Language::TypeScript] {
        let x = run(language, "f.js", source);
        for name in ["main", "add", "sub"] {
            expect(&x, Kind::Function, name, None);
        }
    }
}

#[test]
fn trae_bug_c_structs_are_classes() {
    let x = run(Language::C, "s.c", "struct node { struct node *next; };\n");
    expect(&x, Kind::Class, "node", None);
}

#[test]
fn trae_bug_java_interfaces_and_constructors_are_found() {
    let x = run(Language::Java, "A.java", "interface Runner { void run(); }\nclass A { A() {} A(int x) {} }\n");
    expect(&x, Kind::Interface, "Runner", None);
    assert_eq!(x.symbols.iter().filter(|s| s.kind == Kind::Method && s.name == "A").count(), 2);
}

#[test]
fn trae_bug_cpp_functions_returning_pointers_keep_their_bare_name() {
    let x = run(
        Language::Cpp,
        "p.cpp",
        "int *ptrfn(int a) { return 0; }\nchar **pp(void) { return 0; }\nconst T &get() { return t; }\n",
    );
    for name in ["ptrfn", "pp", "get"] {
        expect(&x, Kind::Function, name, None);
    }
    assert!(x.symbols.iter().all(|s| !s.name.contains('(')), "{:#?}", defs(&x));
}

#[test]
fn files_that_do_not_parse_still_yield_what_they_can() {
    let x = run(
        Language::Python,
        "broken.py",
        "def good():\n    pass\n\ndef broken(:\n    pass\n\nclass Fine:\n    def m(self): pass\n",
    );
    assert!(x.partial);
    expect(&x, Kind::Function, "good", None);
    expect(&x, Kind::Class, "Fine", None);
}

#[test]
fn hostile_sources_do_not_crash_extraction() {
    // A pathological file that would take hours is the time limit's job (tests/index.rs).
    let deep = "(".repeat(2_000);
    let long_line = format!("x = '{}'\n", "a".repeat(200_000));
    let garbage: String = (0..20_000u32).map(|i| char::from_u32(i % 0x2FF + 1).unwrap()).collect();
    for language in tackle_ckg::language::LANGUAGES {
        for source in [deep.as_str(), long_line.as_str(), garbage.as_str(), "\u{feff}", ""] {
            let x = extract(&mut Tagger::new(), language, "h", source.as_bytes(), None).unwrap();
            assert!(x.symbols.len() < 10_000);
        }
        // Invalid UTF-8 is parsed as bytes; names come out lossily.
        let bytes = b"def f\xff\xfe():\n    pass\nclass \xc3(A): pass\n";
        extract(&mut Tagger::new(), language, "h", bytes, None).unwrap();
    }
}

#[test]
fn a_raised_flag_stops_extraction() {
    let flag = std::sync::atomic::AtomicUsize::new(1);
    let source = "def f():\n    pass\n".repeat(10_000);
    let result = extract(&mut Tagger::new(), Language::Python, "big.py", source.as_bytes(), Some(&flag));
    assert!(matches!(result, Err(tackle_ckg::extract::ExtractError::Cancelled)), "{result:?}");
}

#[test]
fn calls_through_a_member_access_are_told_from_bare_calls() {
    let cases = [
        (Language::Python, "def f(x):\n    g(x)\n    x.h()\n"),
        (Language::Rust, "fn f(x: X) { g(x); x.h(); }\n"),
        (Language::JavaScript, "function f(x) { g(x); x.h(); }\n"),
        (Language::Go, "package p\nfunc f(x X) { g(x); x.h() }\n"),
        (Language::Java, "class A { void f(X x) { g(x); x.h(); } }\n"),
        (Language::Cpp, "void f(X *x) { g(x); x->h(); }\n"),
    ];
    for (language, source) in cases {
        let x = run(language, "m", source);
        let calls: Vec<String> = refs(&x, RefKind::Call).into_iter().map(|(name, _)| name).collect();
        let members: Vec<String> = refs(&x, RefKind::MethodCall).into_iter().map(|(name, _)| name).collect();
        assert_eq!((calls, members), (vec!["g".to_owned()], vec!["h".to_owned()]), "{language:?}");
    }
}
