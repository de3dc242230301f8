use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::*;

fn params_bar() -> Value {
    // tests/cwl/tests/params.cwl's default for `bar`.
    json!({"bar": {"baz": "zab1", "b az": 2, "b'az": true, "b\"az": null, "buz": ["a", "b", "c"]}})
}

fn ev(e: &Expressions, text: &str, inputs: &Value) -> Result<Value, ExprError> {
    let runtime = json!({"outdir": "/out", "tmpdir": "/tmp", "cores": 2, "ram": 1024});
    e.eval(
        text,
        &Context {
            inputs,
            self_: &json!(null),
            runtime: &runtime,
        },
    )
}

fn nojs() -> Expressions {
    Expressions::new(false, Vec::new())
}

fn js() -> Expressions {
    Expressions::new(true, Vec::new())
}

#[test]
fn scanner_nesting_strings_and_escapes() {
    use Segment::*;
    assert_eq!(
        parse_refs("a$(f(x(1)))b").unwrap(),
        vec![Text("a".into()), Paren("f(x(1))".into()), Text("b".into())]
    );
    assert_eq!(
        parse_refs("${ if (x) { return {a: 1}; } }").unwrap(),
        vec![Brace(" if (x) { return {a: 1}; } ".into())]
    );
    // A closer inside a quoted string does not end the expression, nor does an escaped quote.
    assert_eq!(
        parse_refs(r#"$(inputs["a)b"])-$(inputs['it\'s)'])"#).unwrap(),
        vec![
            Paren(r#"inputs["a)b"]"#.into()),
            Text("-".into()),
            Paren(r"inputs['it\'s)']".into())
        ]
    );
    // `}` inside $( and `)` inside ${ are plain characters.
    assert_eq!(parse_refs("$(a})").unwrap(), vec![Paren("a}".into())]);
    assert_eq!(parse_refs("${a)}").unwrap(), vec![Brace("a)".into())]);
    assert_eq!(
        parse_refs(r"\$(x) \${y} a\\b \n $").unwrap(),
        vec![Text(r"$(x) ${y} a\b \n $".into())]
    );
    assert_eq!(
        parse_refs(r"\\$(x)").unwrap(),
        vec![Text(r"\".into()), Paren("x".into())]
    );
    let e = parse_refs("ab $(f(x)").unwrap_err();
    assert!(e.contains("`$(` at character 3"), "{e}");
    assert!(parse_refs("${ '}' ").is_err());
    assert!(has_expression("a $(b)"));
    assert!(has_expression("${"));
    assert!(!has_expression(r"\$(b) \${c} $ plain"));
    assert!(has_expression(r"\\$(b)"));
}

#[test]
fn parameter_reference_forms() {
    let e = nojs();
    let i = params_bar();
    for (text, want) in [
        ("$(inputs)", i.clone()),
        ("$(inputs.bar)", i["bar"].clone()),
        ("$(inputs['bar'])", i["bar"].clone()),
        ("$(inputs[\"bar\"])", i["bar"].clone()),
        ("$(inputs['bar'][\"baz\"])", json!("zab1")),
        ("$(inputs.bar['b az'])", json!(2)),
        (r"$(inputs.bar['b\'az'])", json!(true)),
        ("$(inputs.bar[\"b'az\"])", json!(true)),
        ("$(inputs.bar['b\"az'])", json!(null)),
        ("$(inputs.bar.buz[1])", json!("b")),
        ("$(inputs.bar.buz.length)", json!(3)),
        ("$(null)", json!(null)),
        ("$(runtime.cores)", json!(2)),
        ("$(self)", json!(null)),
    ] {
        assert_eq!(ev(&e, text, &i).unwrap(), want, "{text}");
    }
    // params.cwl t13..t26: interpolation.
    assert_eq!(ev(&e, "-$(inputs.bar.baz)", &i).unwrap(), json!("-zab1"));
    assert_eq!(
        ev(&e, "$(inputs.bar['b az']) $(inputs.bar['b az'])", &i).unwrap(),
        json!("2 2")
    );
    assert_eq!(
        ev(&e, r"$(inputs.bar['b\'az']) $(inputs.bar['b\'az'])", &i).unwrap(),
        json!("true true")
    );
    assert_eq!(
        ev(&e, "$(inputs.bar['b\"az']) $(inputs.bar['b\"az'])", &i).unwrap(),
        json!("null null")
    );
}

#[test]
fn parameter_reference_errors_name_what_is_wrong() {
    let e = nojs();
    let i = params_bar();
    // params_broken_null.cwl
    let err = ev(&e, "$(null.something)", &i).unwrap_err();
    assert!(matches!(err.kind, ExprErrorKind::Reference(_)), "{err}");
    // params_broken_length_of_non_list.cwl
    let err = ev(&e, "$(inputs.bar.length)", &json!({"bar": 0})).unwrap_err();
    assert!(
        err.to_string()
            .contains("a number, which has no key `length`"),
        "{err}"
    );
    let err = ev(&e, "$(inputs.missing)", &i).unwrap_err();
    assert_eq!(err.expr, "$(inputs.missing)");
    assert!(
        err.to_string()
            .contains("does not contain the key `missing`"),
        "{err}"
    );
    let err = ev(&e, "$(inputs.bar.buz[7])", &i).unwrap_err();
    assert!(err.to_string().contains("has 3 items, no index 7"), "{err}");
    let err = ev(&e, "x $(inputs.bar.baz + 1)", &i).unwrap_err();
    assert_eq!(err.kind, ExprErrorKind::NeedsJavascript);
    let err = ev(&e, "${ return 1; }", &i).unwrap_err();
    assert_eq!(err.kind, ExprErrorKind::NeedsJavascript);
    assert!(err.to_string().contains("InlineJavascriptRequirement"));
}

#[test]
fn user_defined_length_in_parameter_reference() {
    // params_input_length_non_array.cwl: `length` as a record field, not array length.
    let e = nojs();
    let i = json!({"length": 1, "bar": {"length": 2}, "baz": {"length": {"bap": 3}}});
    assert_eq!(ev(&e, "$(inputs.length)", &i).unwrap(), json!(1));
    assert_eq!(ev(&e, "$(inputs.bar.length)", &i).unwrap(), json!(2));
    assert_eq!(ev(&e, "$(inputs.baz.length.bap)", &i).unwrap(), json!(3));
}

#[test]
fn interpolation_typing() {
    let e = nojs();
    let i = json!({"n": 3, "f": 0.00001, "g": 123000.0, "b": false, "o": {"z": [1, 2.5], "a": "s"}, "s": "x y"});
    // Exactly one reference keeps its JSON type (surrounding whitespace trimmed as cwltool).
    assert_eq!(ev(&e, "$(inputs.n)", &i).unwrap(), json!(3));
    assert_eq!(ev(&e, "  $(inputs.o) \n", &i).unwrap(), i["o"]);
    assert_eq!(ev(&e, "$(inputs.b)", &i).unwrap(), json!(false));
    // Otherwise a string: strings raw, others as Python's json.dumps(sort_keys=True).
    assert_eq!(ev(&e, "n=$(inputs.n)", &i).unwrap(), json!("n=3"));
    assert_eq!(
        ev(&e, "$(inputs.s)$(inputs.s)", &i).unwrap(),
        json!("x yx y")
    );
    assert_eq!(
        ev(&e, "o=$(inputs.o)", &i).unwrap(),
        json!(r#"o={"a": "s", "z": [1, 2.5]}"#)
    );
    assert_eq!(
        ev(&e, "$(inputs.f) $(inputs.g) $(inputs.b)", &i).unwrap(),
        json!("1e-05 123000.0 false")
    );
    // No expression: returned as is, escapes untouched (cwltool does not scan such fields).
    assert_eq!(ev(&e, r" a\\b ", &i).unwrap(), json!(r" a\\b "));
    assert_eq!(
        ev(&e, r"\$(inputs.n) is $(inputs.n)", &i).unwrap(),
        json!("$(inputs.n) is 3")
    );
    assert_eq!(
        e.eval_value(
            &json!(5),
            &Context {
                inputs: &i,
                self_: &i,
                runtime: &i
            }
        )
        .unwrap(),
        json!(5)
    );
}

#[test]
fn python_float_repr() {
    for (f, want) in [
        (0.00001, "1e-05"),
        (1.23e-05, "1.23e-05"),
        (0.0001, "0.0001"),
        (123000.0, "123000.0"),
        (1230000.0, "1230000.0"),
        (1e16, "1e+16"),
        (1e15, "1000000000000000.0"),
        (-2.5, "-2.5"),
        (0.0, "0.0"),
        (1.5e300, "1.5e+300"),
        (0.1, "0.1"),
    ] {
        assert_eq!(py_float(f), want, "{f}");
    }
}

#[test]
fn javascript_expressions_and_lib() {
    let lib = vec![
        "function double(x) { return 2 * x; }".to_string(),
        "var greeting = 'hi';".to_string(),
    ];
    let e = Expressions::new(true, lib);
    let i = json!({"n": 21, "s": "abc", "files": [{"basename": "a.txt"}, {"basename": "b.txt"}]});
    assert_eq!(ev(&e, "$(double(inputs.n))", &i).unwrap(), json!(42));
    assert_eq!(
        ev(&e, "${ return greeting + ' ' + inputs.s; }", &i).unwrap(),
        json!("hi abc")
    );
    assert_eq!(
        ev(&e, "${ var r = {}; r.k = [1, null, 'x']; return r; }", &i).unwrap(),
        json!({"k": [1, null, "x"]})
    );
    assert_eq!(ev(&e, "${ return null; }", &i).unwrap(), json!(null));
    let err = ev(&e, "${ }", &i).unwrap_err();
    assert!(err.to_string().contains("undefined"), "{err}");
    let err = ev(&e, "$(inputs.nothing)", &i).unwrap_err();
    assert!(err.to_string().contains("undefined"), "{err}");
    // `.length` of a string is not a parameter reference result, so JavaScript answers it.
    assert_eq!(ev(&e, "$(inputs.s.length)", &i).unwrap(), json!(3));
    assert_eq!(
        ev(
            &e,
            "$(inputs.files.map(function(f){return f.basename;}).join(','))",
            &i
        )
        .unwrap(),
        json!("a.txt,b.txt")
    );
    assert_eq!(ev(&e, "n=$(inputs.n * 2)!", &i).unwrap(), json!("n=42!"));
    assert_eq!(
        ev(&e, "$(runtime.outdir + '/x')", &i).unwrap(),
        json!("/out/x")
    );
    // Nothing one evaluation declares is seen by the next.
    ev(&e, "${ var leaked = 1; return leaked; }", &i).unwrap();
    let err = ev(&e, "$(leaked)", &i).unwrap_err();
    assert!(err.to_string().contains("leaked"), "{err}");
    // A `__proto__` key is a plain property, as in the JSON.
    assert_eq!(
        ev(
            &e,
            "$(Object.keys(inputs.o).length)",
            &json!({"o": {"__proto__": 1, "a": 2}})
        )
        .unwrap(),
        json!(2)
    );
}

#[test]
fn javascript_errors() {
    let e = js();
    let i = json!({});
    let err = ev(&e, "${ throw new Error('boom here'); }", &i).unwrap_err();
    assert_eq!(err.expr, "${ throw new Error('boom here'); }");
    assert!(
        matches!(&err.kind, ExprErrorKind::Javascript(m) if m.contains("boom here")),
        "{err}"
    );
    // Strict mode: assigning an undeclared variable is a ReferenceError.
    let err = ev(&e, "${ undeclared = 5; return undeclared; }", &i).unwrap_err();
    assert!(
        matches!(&err.kind, ExprErrorKind::Javascript(m) if m.contains("undeclared")),
        "{err}"
    );
    let err = ev(&e, "$(1 +)", &i).unwrap_err();
    assert!(
        matches!(&err.kind, ExprErrorKind::Javascript(m) if m.contains("SyntaxError")),
        "{err}"
    );
    // The engine still works after errors.
    assert_eq!(ev(&e, "$(1 + 1)", &i).unwrap(), json!(2));
}

#[test]
fn the_library_top_level_sees_the_global_object_as_this() {
    // underscore.js's shape: an IIFE called with the top level's `this` that exports through
    // it, then a library line using the export (tests/cwl/tests/template-tool.cwl).
    let lib = vec![
        "(function () { var root = this; root.lib_ = { twice: function (x) { return 2 * x; } }; }.call(this));".to_string(),
        "var t = function (x) { return lib_.twice(x) + 1; };".to_string(),
    ];
    let e = Expressions::new(true, lib);
    let i = json!({"n": 20});
    assert_eq!(ev(&e, "$(t(inputs.n))", &i).unwrap(), json!(41));
    // Still strict, as cwltool's script is: an undeclared assignment is an error, and the
    // library's own bindings are not globals another expression could rely on.
    let err = ev(&e, "${ undeclared = 5; return 1; }", &i).unwrap_err();
    assert!(
        matches!(&err.kind, ExprErrorKind::Javascript(m) if m.contains("undeclared")),
        "{err}"
    );
    assert_eq!(
        ev(&e, "$(typeof globalThis.t)", &i).unwrap(),
        json!("undefined")
    );
}

#[test]
fn javascript_bounds() {
    let e = Expressions::with_limits(
        true,
        Vec::new(),
        Limits {
            time: Duration::from_millis(300),
            ..Limits::default()
        },
    );
    let i = json!({});
    let t = Instant::now();
    let err = ev(&e, "${ while (true) {} }", &i).unwrap_err();
    assert_eq!(
        err.kind,
        ExprErrorKind::TimeLimit(Duration::from_millis(300)),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(5));
    // A catch inside the script does not swallow the interrupt.
    let err = ev(
        &e,
        "${ for (;;) { try { while (true) {} } catch (x) {} } }",
        &i,
    )
    .unwrap_err();
    assert!(matches!(err.kind, ExprErrorKind::TimeLimit(_)), "{err}");
    let err = ev(
        &e,
        "${ var a = []; for (;;) { a.push(new Array(100000).fill(1.5)); } }",
        &i,
    )
    .unwrap_err();
    assert_eq!(err.kind, ExprErrorKind::MemoryLimit(64 << 20), "{err}");
    let err = ev(
        &e,
        "${ function f(n) { return f(n + 1) + 1; } return f(0); }",
        &i,
    )
    .unwrap_err();
    assert_eq!(err.kind, ExprErrorKind::StackLimit(512 << 10), "{err}");
    assert_eq!(ev(&e, "$([1, 2].length)", &i).unwrap(), json!(2));
    // No host I/O is exposed.
    for name in ["require", "process", "std", "os", "print"] {
        let v = ev(&e, &format!("$(typeof {name})"), &i).unwrap();
        assert_eq!(v, json!("undefined"), "{name}");
    }
}

#[test]
fn suite_expressions() {
    // From tests/cwl/tests: valueFrom / outputEval / glob fields of real tools.
    let e = js();
    let file = json!({"class": "File", "path": "/d/whale.txt", "basename": "whale.txt", "nameroot": "whale", "nameext": ".txt", "size": 1111});
    let i = json!({"file1": file, "reverse": true, "args": ["a", "b"]});
    assert_eq!(
        ev(&e, "$(inputs.file1.nameroot).out", &i).unwrap(),
        json!("whale.out")
    );
    assert_eq!(
        ev(
            &e,
            "${ if (inputs.reverse) { return ['-r']; } return []; }",
            &i
        )
        .unwrap(),
        json!(["-r"])
    );
    let runtime = json!({"outdir": "/o"});
    let self_ = json!([{"contents": "  42\n"}]);
    let v = e
        .eval(
            "$(parseInt(self[0].contents))",
            &Context {
                inputs: &i,
                self_: &self_,
                runtime: &runtime,
            },
        )
        .unwrap();
    assert_eq!(v, json!(42));
    assert_eq!(
        ev(&e, "$(inputs.args.join(' ')) $(inputs.file1)", &i).unwrap(),
        json!(
            r#"a b {"basename": "whale.txt", "class": "File", "nameext": ".txt", "nameroot": "whale", "path": "/d/whale.txt", "size": 1111}"#
        )
    );
}

/// Not a timing assertion: prints the cost of an evaluation on the shared engine.
#[test]
fn measure_cost() {
    let e = js();
    let i = json!({"n": 1, "files": (0..20).map(|k| json!({"class": "File", "path": format!("/d/f{k}")})).collect::<Vec<_>>()});
    let t = Instant::now();
    ev(&e, "$(inputs.n + 1)", &i).unwrap();
    let first = t.elapsed();
    let n = 2000;
    let t = Instant::now();
    for _ in 0..n {
        assert_eq!(ev(&e, "$(inputs.n + 1)", &i).unwrap(), json!(2));
    }
    let js_each = t.elapsed() / n;
    let t = Instant::now();
    for _ in 0..n {
        ev(&e, "$(1)", &json!({})).unwrap();
    }
    let js_trivial = t.elapsed() / n;
    let p = nojs();
    let t = Instant::now();
    for _ in 0..n {
        assert_eq!(ev(&p, "$(inputs.n)", &i).unwrap(), json!(1));
    }
    let ref_each = t.elapsed() / n;
    let msg = format!(
        "expr cost: first JS evaluation (engine start) {first:?}; JS {} ns/eval (trivial, empty inputs: {} ns); parameter reference {} ns/eval",
        js_each.as_nanos(),
        js_trivial.as_nanos(),
        ref_each.as_nanos()
    );
    #[allow(clippy::print_stderr)]
    {
        eprintln!("{msg}");
    }
}

fn strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) if s.contains("$(") || s.contains("${") => out.push(s),
        Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
        Value::Object(map) => map.values().for_each(|i| strings(i, out)),
        _ => {}
    }
}

/// Every expression in the vendored conformance tools scans, and every JavaScript one
/// compiles (it is wrapped in a function that is returned, not run).
#[test]
fn every_suite_expression_scans_and_compiles() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/cwl/tests");
    let e = js();
    let (mut seen, mut compiled) = (0, 0);
    let mut entries: Vec<_> = fs_err::read_dir(&dir)
        .unwrap()
        .map(|d| d.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.extension().is_none_or(|x| x != "cwl") {
            continue;
        }
        let text = fs_err::read_to_string(&path).unwrap();
        let Ok(doc) = serde_norway::from_str::<Value>(&text) else {
            continue;
        };
        let mut found = Vec::new();
        strings(&doc, &mut found);
        for s in found {
            // expressionLib entries and scripts inside file contents are not fields.
            let Ok(segs) = parse_refs(s.trim()) else {
                panic!("{}: `{s}` does not scan", path.display());
            };
            seen += 1;
            for seg in segs {
                let wrapped = match seg {
                    Segment::Text(_) => continue,
                    Segment::Paren(p) => format!("${{ return function () {{ return ({p}); }}; }}"),
                    Segment::Brace(b) => format!("${{ return function () {{ {b} }}; }}"),
                };
                let err = ev(&e, &wrapped, &json!({})).unwrap_err();
                assert!(
                    err.to_string().contains("undefined"),
                    "{}: `{s}`: {err}",
                    path.display()
                );
                compiled += 1;
            }
        }
    }
    assert!(
        seen >= 140 && compiled >= 150,
        "{seen} fields, {compiled} expressions"
    );
}
