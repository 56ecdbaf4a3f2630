//! Stand-ins for the commands of the `train` feature in a build without it:
//! they take any arguments and say how to get the feature, instead of clap's
//! "unrecognized subcommand" (which suggests an unrelated command).

use anyhow::{bail, Result};
use clap::Args;

/// The manual's page that explains `scripts/libtorch.sh` and the feature.
pub const DOC_PAGE: &str = "docs/train.md";

/// That page's title.
pub const DOC_TITLE: &str = "Training on the simulated network (feature `train`)";

/// Any arguments at all (they are not parsed).
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct AnyArgs {
    #[arg(num_args = 0.., allow_hyphen_values = true, trailing_var_arg = true, hide = true)]
    args: Vec<std::ffi::OsString>,
}

/// Fails with the message naming the feature and the manual's page.
pub fn run(command: &str, _args: AnyArgs) -> Result<()> {
    bail!(
        "`fedtopo {command}`: built without the `train` feature: see {DOC_PAGE} \
         (\"{DOC_TITLE}\"; build with `scripts/libtorch.sh cargo build --release --features train`)"
    )
}
