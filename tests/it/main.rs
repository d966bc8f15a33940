//! All integration tests in one binary: the CLI end to end, the rule set, the engine's
//! equivalence with a plain regex pass, golden outputs, and recall on a generated corpus.

#[path = "../../corpus/history.rs"]
mod history;
#[path = "../../corpus/synth.rs"]
mod synth;

mod admission;
mod agent_fixtures;
mod agents;
mod architecture;
mod archive;
mod aws_forms;
mod by_name;
mod by_value;
mod cli;
mod confidence;
mod decode;
mod env;
mod equivalence;
mod exits;
mod features;
mod filter;
mod filter_trust;
mod fuzz_replay;
mod git;
mod gitleaks;
mod golden;
mod hook_server;
mod hooks;
#[cfg(feature = "db-validate")]
mod hosts;
mod image;
mod kernel;
mod large;
mod loss;
mod masking_property;
mod mcp_proxy;
mod merge;
mod notebook;
mod precommit;
mod promises;
#[cfg(feature = "http-validate")]
mod providers;
mod reach;
mod real_agents;
mod recall;
mod rules;
#[cfg(feature = "aws")]
mod runtime_audit;
mod scale_docs;
mod scrub_sqlite;
mod shapes;
mod shard;
mod shard_listing;
mod trust;
mod util;
mod validate;
