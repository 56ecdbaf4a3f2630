//! The README's and the manual's (`docs/*.md`) examples work with this build.
//!
//! * **Command examples**: every line of a ```` ```sh ```` block (backslash
//!   continuations joined, `# comments` dropped) is one command.
//!   - `fedtopo ARGS` (also written `cargo run --release -- ARGS`,
//!     `target/train/release/fedtopo ARGS` or `scripts/libtorch.sh cargo run
//!     --release --features train -- ARGS`) is **run** with the test build of
//!     the binary, in a scratch directory per page (the blocks of a page run
//!     in order there, so a file one command writes is there for the next;
//!     the repository's `underlays/`, `experiments/`, `tests/`, ... are
//!     reachable through symbolic links), and must succeed within
//!     [`RUN_LIMIT`]. The arguments are split and expanded by `bash`
//!     (quotes, `$(...)`), so they are what a shell would pass.
//!   - Commands listed in [`PARSE_ONLY`] (each with its reason: minutes of
//!     work, files made by a scheduler or a 10,000-router generator, or
//!     writing into the repository) and commands of the `train` feature are
//!     **parse-checked**: run with `FEDTOPO_PARSE_ONLY=1`, which makes the
//!     binary parse its command line through every option's value parser
//!     and exit without running (`src/cli/mod.rs`). A build without the
//!     `train` feature has no parser for those commands (a stand-in takes
//!     any argument): there each of their `--options` must be a field of the
//!     train command's argument structs (`src/cli/train.rs`, `training.rs`,
//!     `args.rs`, `dcliques.rs`); CI's `cargo test --features train` parses
//!     them for real.
//!   - Other programs (`cargo test`, `cargo bench --bench B`, `cargo run
//!     --example E`, `pip install ./python`, `sbatch ... scripts/S`,
//!     `scripts/libtorch.sh ...`) are not run: every repository path they
//!     name, and the bench, example or test target, must exist. A line
//!     that starts with any other program fails the test (add a rule).
//! * **Output blocks**: a ```` ```text ```` block right after a ```` ```sh ````
//!   block shows what the block's last command prints: each of its lines
//!   must be a line of that command's stdout or stderr, in order (a block may
//!   leave lines out, e.g. a table's borders, never change one). The
//!   README's `## Example output` is compared whole by `tests/readme.rs`.
//! * **Synopses**: in a ```` ```text ```` block of `fedtopo ...` lines, every
//!   `--option` (and `-o`, `-s`) must be listed by the `--help` of the
//!   command(s) the line names (`compare|simulate ...` names two).
//! * **Links**: every relative link of these pages names a file that
//!   exists and, with `#anchor`, a heading of it.
//! * **Architecture**: the layout of `docs/architecture.md` names every
//!   module of `src/lib.rs`, and only those, in the floor order of
//!   `scripts/module-graph.py`.
//!
//! Cost, when written: 37 commands run and 7 parse-checked in 3.9 s (the
//! opt-level-2 test build, shared 2-core machine).

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The longest a documented command may run in this test.
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// Commands only parse-checked: (a substring of the command, why).
const PARSE_ONLY: &[(&str, &str)] = &[
    (
        "run experiments/throughput-tables/experiment.toml",
        "Tables 3, 6 and 7 on eight underlays: 28 s in release (scripts/fresh-clone-check.sh runs it)",
    ),
    (
        "rgg-10000.gml",
        "10,000 routers, made by `cargo run --example rgg_gml`: 30 s and 1.9 GB in release",
    ),
    (
        "out/shard-*",
        "merges the shards of a Slurm array (scripts/slurm-ci.sh runs it on a real scheduler)",
    ),
];

/// The pages checked: the README and every `docs/*.md`.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![Path::new(ROOT).join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("docs"))
        .expect("docs/")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    assert!(docs.len() >= 10, "docs/ has {} pages", docs.len());
    pages.extend(docs);
    pages
}

fn rel(page: &Path) -> String {
    page.strip_prefix(ROOT)
        .unwrap_or(page)
        .display()
        .to_string()
}

/// A fenced block: its info string, first line number (1-based, the fence's)
/// and lines, and whether it starts right after the previous block's fence.
struct Block {
    lang: String,
    line: usize,
    lines: Vec<String>,
    follows_previous: bool,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut open: Option<Block> = None;
    let mut last_close = usize::MAX;
    for (i, line) in text.lines().enumerate() {
        match open.take() {
            None => {
                if let Some(lang) = line.strip_prefix("```") {
                    open = Some(Block {
                        lang: lang.trim().to_string(),
                        line: i + 1,
                        lines: Vec::new(),
                        follows_previous: last_close.checked_add(1) == Some(i),
                    });
                }
            }
            Some(mut b) => {
                if line.starts_with("```") {
                    last_close = i;
                    out.push(b);
                } else {
                    b.lines.push(line.to_string());
                    open = Some(b);
                }
            }
        }
    }
    assert!(open.is_none(), "an unclosed ``` block");
    out
}

/// The commands of an `sh` block: continuation lines joined, comments and
/// blank lines dropped.
fn commands(lines: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in lines {
        let line = strip_comment(line);
        if let Some(head) = line.trim_end().strip_suffix('\\') {
            current.push_str(head);
            current.push(' ');
            continue;
        }
        current.push_str(line.trim_end());
        let command = current.split_whitespace().collect::<Vec<_>>().join(" ");
        if !command.is_empty() {
            out.push(command);
        }
        current.clear();
    }
    assert!(
        current.is_empty(),
        "a block ends with a continuation: {current}"
    );
    out
}

/// `line` without a `#` comment (a `#` after white space, outside quotes).
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double, mut prev_space) = (false, false, true);
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev_space => return &line[..i],
            _ => {}
        }
        prev_space = c.is_whitespace();
    }
    line
}

/// How a documented command line is checked.
enum Kind {
    /// `fedtopo` with these (unsplit) arguments.
    Fedtopo(String),
    /// Another program, not run.
    Other,
}

fn kind(command: &str) -> Kind {
    const FEDTOPO: &[&str] = &[
        "fedtopo ",
        "cargo run --release -- ",
        "target/train/release/fedtopo ",
        "scripts/libtorch.sh cargo run --release --features train -- ",
    ];
    const OTHER: &[&str] = &[
        "cargo test",
        "cargo install --path .",
        "cargo bench ",
        "cargo run --example ",
        "cargo run --release --example ",
        "scripts/libtorch.sh",
        "pip install ./python",
        "sbatch ",
    ];
    if let Some(args) = FEDTOPO.iter().find_map(|p| command.strip_prefix(p)) {
        return Kind::Fedtopo(args.to_string());
    }
    if OTHER.iter().any(|p| command.starts_with(p)) {
        return Kind::Other;
    }
    panic!("a documented command that tests/docs.rs has no rule for: `{command}`");
}

/// The repository paths, bench, example and test targets a command names
/// exist.
fn check_named_files(page: &str, command: &str) {
    let root = Path::new(ROOT);
    let tokens: Vec<&str> = command.split_whitespace().collect();
    for (i, token) in tokens.iter().enumerate() {
        let token = token.trim_matches(|c| c == '"' || c == '\'');
        let token = token.strip_prefix("$PWD/").unwrap_or(token);
        let token = token.strip_prefix("./").unwrap_or(token);
        let top = [
            "underlays/",
            "experiments/",
            "tests/",
            "scripts/",
            "python",
            "benches/",
            "examples/",
        ];
        if top.iter().any(|t| token.starts_with(t)) {
            assert!(
                root.join(token).exists(),
                "{page}: `{command}` names {token}, which does not exist"
            );
        }
        let target = |flag: &str, dir: &str| {
            if i > 0 && tokens[i - 1] == flag {
                let file = root.join(dir).join(format!("{token}.rs"));
                assert!(file.exists(), "{page}: `{command}`: no {}", file.display());
            }
        };
        target("--bench", "benches");
        target("--example", "examples");
        target("--test", "tests");
    }
}

/// Whether the command belongs to the `train` feature.
fn needs_train(argv: &[String]) -> bool {
    let has = |s: &str| argv.iter().any(|a| a == s);
    argv.first().is_some_and(|c| c == "train")
        || (argv.first().is_some_and(|c| c == "reproduce")
            && argv.get(1).is_some_and(|c| c == "dcliques-convergence"))
        || has("--verify")
        || argv
            .windows(2)
            .any(|w| w[0] == "--trainer" && w[1] == "torch")
}

/// `args` split and expanded as `bash` would pass them, run in `dir`.
fn shell_words(args: &str, dir: &Path) -> Vec<String> {
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!("printf '%s\\0' {args}"))
        .current_dir(dir)
        .output()
        .expect("bash runs");
    assert!(o.status.success(), "bash could not split `{args}`");
    String::from_utf8(o.stdout)
        .expect("utf-8")
        .split('\0')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Runs the binary: (success, stdout, stderr).
fn run(argv: &[String], dir: &Path, parse_only: bool) -> (bool, String, String) {
    use std::io::Read;
    let mut command = Command::new(env!("CARGO_BIN_EXE_fedtopo"));
    command
        .args(argv)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("FEDTOPO_PROGRESS_INTERVAL_MS")
        .env_remove("COLUMNS");
    if parse_only {
        command.env("FEDTOPO_PARSE_ONLY", "1");
    }
    let mut child = command.spawn().expect("binary starts");
    let mut out_pipe = child.stdout.take().expect("stdout");
    let mut err_pipe = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out_pipe.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > RUN_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "`fedtopo {}` still runs after {RUN_LIMIT:?}: too slow for this test, \
                 list it in PARSE_ONLY with the reason",
                argv.join(" ")
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    (
        status.success(),
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    )
}

/// A scratch directory with the repository's folders linked in.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fedtopo-docs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    for top in [
        "underlays",
        "experiments",
        "tests",
        "scripts",
        "python",
        "benches",
        "examples",
    ] {
        std::os::unix::fs::symlink(Path::new(ROOT).join(top), dir.join(top)).expect("symlink");
    }
    dir
}

/// The `--options` of the train command's argument structs (for builds
/// without the feature, where the command has no parser).
fn train_source_has(option: &str) -> bool {
    let sources = ["train.rs", "training.rs", "args.rs", "dcliques.rs"]
        .iter()
        .map(|f| std::fs::read_to_string(Path::new(ROOT).join("src/cli").join(f)).unwrap())
        .collect::<String>();
    let field = option.trim_start_matches('-').replace('-', "_");
    let long = format!("long = \"{}\"", option.trim_start_matches('-'));
    sources.contains(&format!(" {field}:")) || sources.contains(&long)
}

#[test]
fn every_command_example_works() {
    let mut ran = 0;
    let mut parsed = 0;
    let mut other = 0;
    for page in pages() {
        let name = rel(&page);
        let text = std::fs::read_to_string(&page).expect("page");
        let dir = scratch(&name.replace('/', "-"));
        let mut last_output: Option<(String, String)> = None;
        for block in blocks(&text) {
            if block.lang == "text" && block.follows_previous {
                if let Some((command, printed)) = &last_output {
                    check_output(&name, block.line, command, printed, &block.lines);
                }
            }
            last_output = None;
            if block.lang != "sh" {
                continue;
            }
            for command in commands(&block.lines) {
                check_named_files(&name, &command);
                let Kind::Fedtopo(args) = kind(&command) else {
                    other += 1;
                    continue;
                };
                let (args, redirect) = match args.split_once(" > ") {
                    Some((a, file)) => (a.to_string(), Some(file.trim().to_string())),
                    None => (args, None),
                };
                let argv = shell_words(&args, &dir);
                let train = needs_train(&argv);
                if train && !cfg!(feature = "train") {
                    for option in argv.iter().filter(|a| a.starts_with("--")) {
                        let option = option.split('=').next().unwrap_or(option);
                        assert!(
                            train_source_has(option),
                            "{name}:{}: `{command}`: {option} is no option of the train command",
                            block.line
                        );
                    }
                    parsed += 1;
                    continue;
                }
                let parse_only = train || PARSE_ONLY.iter().any(|(p, _)| command.contains(p));
                let (ok, out, err) = run(&argv, &dir, parse_only);
                assert!(
                    ok,
                    "{name}:{}: `{command}` failed{}:\n{err}",
                    block.line,
                    if parse_only { " to parse" } else { "" }
                );
                if parse_only {
                    parsed += 1;
                } else {
                    ran += 1;
                    if let Some(file) = &redirect {
                        std::fs::write(dir.join(file), &out).expect("redirect");
                    }
                    last_output = Some((command.clone(), format!("{err}\n{out}")));
                }
            }
        }
        std::fs::remove_dir_all(&dir).expect("scratch dir removed");
    }
    eprintln!("documented commands: {ran} run, {parsed} parse-checked, {other} other programs");
    assert!(ran >= 30, "only {ran} documented commands run");
}

/// Every line of the output block is a line of what the command printed,
/// in order.
fn check_output(page: &str, line: usize, command: &str, printed: &str, shown: &[String]) {
    let printed: Vec<&str> = printed.lines().collect();
    let mut at = 0;
    for want in shown.iter().filter(|l| !l.trim().is_empty()) {
        match printed[at..].iter().position(|p| p == want) {
            Some(i) => at += i + 1,
            None => panic!(
                "{page}:{line}: the output shown under `{command}` is stale; this line is \
                 not printed (in this order):\n{want}\nprinted now:\n{}",
                printed.join("\n")
            ),
        }
    }
}

/// The `--help` text of `fedtopo PATH...`.
fn help(path: &[&str]) -> String {
    let mut argv: Vec<&str> = path.to_vec();
    argv.push("--help");
    let o = common::fedtopo(&argv);
    assert!(
        o.status.success(),
        "fedtopo {} --help failed",
        path.join(" ")
    );
    String::from_utf8(o.stdout).expect("utf-8")
}

#[test]
fn every_synopsis_option_exists() {
    const WITH_SUBCOMMANDS: &[&str] = &["underlay", "trace", "tornado", "reproduce"];
    let mut checked = 0;
    for page in pages() {
        let name = rel(&page);
        let text = std::fs::read_to_string(&page).expect("page");
        for block in blocks(&text) {
            let first = block.lines.iter().find(|l| !l.trim().is_empty());
            if block.lang != "text" || !first.is_some_and(|l| l.starts_with("fedtopo ")) {
                continue;
            }
            // Join each command's continuation lines.
            let mut commands: Vec<String> = Vec::new();
            for l in &block.lines {
                if l.starts_with("fedtopo ") {
                    commands.push(strip_comment(l).to_string());
                } else if let Some(last) = commands.last_mut() {
                    last.push(' ');
                    last.push_str(strip_comment(l));
                }
            }
            for command in commands {
                let words: Vec<&str> = command.split_whitespace().skip(1).collect();
                let firsts: Vec<&str> = words[0].split('|').collect();
                for first in firsts {
                    let seconds: Vec<Option<&str>> = if WITH_SUBCOMMANDS.contains(&first) {
                        words[1].split('|').map(Some).collect()
                    } else {
                        vec![None]
                    };
                    for second in seconds {
                        let path: Vec<&str> = std::iter::once(first).chain(second).collect();
                        let is_train = first == "train";
                        let help = if is_train && !cfg!(feature = "train") {
                            None
                        } else {
                            Some(help(&path))
                        };
                        for opt in synopsis_options(&command) {
                            let known = match &help {
                                Some(h) => help_lists(h, &opt),
                                None => train_source_has(&opt),
                            };
                            assert!(
                                known,
                                "{name}:{}: `fedtopo {}` has no option {opt} (synopsis: {command})",
                                block.line,
                                path.join(" ")
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} synopsis options checked");
}

/// Whether `help` defines `option` (on a line of the option list, before
/// its description: `  -o, --out <FILE>  ...`).
fn help_lists(help: &str, option: &str) -> bool {
    help.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .any(|l| {
            let head = l.split("  ").next().unwrap_or(l);
            head.split(|c: char| c.is_whitespace() || c == ',')
                .any(|w| w == option)
        })
}

/// The options a synopsis line names: `--long-name`, `-o`, `-s`.
fn synopsis_options(line: &str) -> BTreeSet<String> {
    line.split(|c: char| c.is_whitespace() || "[]|(),".contains(c))
        .filter_map(|w| {
            let w = w.split('=').next().unwrap_or(w);
            let long = w.strip_prefix("--").is_some_and(|n| {
                n.len() > 1 && n.chars().all(|c| c.is_ascii_lowercase() || c == '-')
            });
            let short = w.len() == 2
                && w.starts_with('-')
                && w.chars().nth(1).is_some_and(|c| c.is_ascii_lowercase());
            (long || short).then(|| w.to_string())
        })
        .collect()
}

#[test]
fn the_architecture_layout_lists_every_module_in_floor_order() {
    let pub_mods = |file: &str| -> Vec<String> {
        std::fs::read_to_string(Path::new(ROOT).join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"))
            .lines()
            .filter_map(|l| l.strip_prefix("pub mod "))
            .filter_map(|l| l.strip_suffix(';'))
            .map(str::to_string)
            .collect()
    };
    // A wing (`net/`) counts its rooms as modules: `net::underlay`, ...
    let wings = ["net"];
    let mut modules = BTreeSet::new();
    for m in pub_mods("src/lib.rs") {
        if wings.contains(&m.as_str()) {
            for room in pub_mods(&format!("src/{m}/mod.rs")) {
                modules.insert(format!("{m}::{room}"));
            }
        } else {
            modules.insert(m);
        }
    }
    let script =
        std::fs::read_to_string(Path::new(ROOT).join("scripts/module-graph.py")).expect("script");
    let floors_text = script
        .split("FLOORS = [")
        .nth(1)
        .and_then(|s| s.split("\n]\n").next())
        .expect("FLOORS in scripts/module-graph.py");
    let floor_of = |module: &str| {
        floors_text
            .lines()
            .filter(|l| l.trim_start().starts_with('['))
            .position(|l| l.contains(&format!("\"{module}\"")))
    };
    let page = std::fs::read_to_string(Path::new(ROOT).join("docs/architecture.md"))
        .expect("docs/architecture.md");
    let layout = page
        .split("## Layout")
        .nth(1)
        .and_then(|s| blocks(s).into_iter().next())
        .expect("a block under ## Layout");
    let mut listed = Vec::new();
    for line in &layout.lines {
        let Some(path) = line.split_whitespace().next() else {
            continue;
        };
        let Some(module) = path.strip_prefix("src/") else {
            continue;
        };
        let module = module
            .trim_end_matches('/')
            .trim_end_matches(".rs")
            .replace('/', "::");
        assert!(
            Path::new(ROOT).join(path).exists(),
            "docs/architecture.md lists {path}, which does not exist"
        );
        listed.push(module.to_string());
    }
    let documented: BTreeSet<String> = listed.iter().filter(|m| *m != "cli").cloned().collect();
    assert_eq!(
        documented, modules,
        "docs/architecture.md's layout and src/lib.rs's modules differ"
    );
    let floors: Vec<usize> = listed
        .iter()
        .map(|m| floor_of(m).unwrap_or_else(|| panic!("{m} is on no floor of module-graph.py")))
        .collect();
    for (w, m) in floors.windows(2).zip(listed.windows(2)) {
        assert!(
            w[0] <= w[1],
            "docs/architecture.md lists {} (floor {}) after {} (floor {})",
            m[1],
            w[1],
            m[0],
            w[0]
        );
    }
}

/// GitHub's anchor of a heading: lower case, punctuation but `-` and `_`
/// dropped, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn every_relative_link_resolves() {
    let mut checked = 0;
    for page in pages() {
        let name = rel(&page);
        let text = std::fs::read_to_string(&page).expect("page");
        let dir = page.parent().expect("page's directory");
        for (i, line) in text.lines().enumerate() {
            for piece in line.split("](").skip(1) {
                let Some(target) = piece.split(')').next() else {
                    continue;
                };
                if target.starts_with("http") || target.contains(' ') {
                    continue;
                }
                let (file, fragment) = match target.split_once('#') {
                    Some((f, a)) => (f, Some(a)),
                    None => (target, None),
                };
                let path = if file.is_empty() {
                    page.clone()
                } else {
                    dir.join(file)
                };
                assert!(
                    path.exists(),
                    "{name}:{}: link to {target}: no {}",
                    i + 1,
                    path.display()
                );
                if let Some(fragment) = fragment {
                    let linked = std::fs::read_to_string(&path).expect("linked page");
                    let anchors: BTreeSet<String> = linked
                        .lines()
                        .filter_map(|l| {
                            l.trim_start_matches('#')
                                .strip_prefix(' ')
                                .filter(|_| l.starts_with('#'))
                        })
                        .map(anchor)
                        .collect();
                    assert!(
                        anchors.contains(fragment),
                        "{name}:{}: link to {target}: no heading with anchor #{fragment}",
                        i + 1
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 50, "only {checked} links checked");
}
