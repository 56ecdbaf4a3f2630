//! The README's example output is what `fedtopo compare` prints now.

mod common;
use common::fedtopo;

/// The ```text block under "## Example output" equals stderr + stdout of
/// `fedtopo compare` (the README's first command) on the built-in underlay.
#[test]
fn readme_example_output_is_current() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .unwrap_or_else(|e| panic!("README.md: {e}"));
    let section = readme
        .split("## Example output")
        .nth(1)
        .unwrap_or_else(|| panic!("README.md has no `## Example output` section"));
    let block = section
        .split("```text\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .unwrap_or_else(|| panic!("no ```text block under `## Example output`"));
    let o = fedtopo(&["compare"]);
    assert!(o.status.success());
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stderr),
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(
        block, printed,
        "README example output is stale: rerun `cargo run --release -- compare`"
    );
}
