//! One integration test binary; one file per topic, with a shared harness in `util.rs`.

mod actions;
mod chain;
mod classifier;
mod codec;
mod crash_consistency;
mod dev_split;
mod entries;
mod examples;
mod gates;
mod golden;
mod ingest;
mod judges;
mod layers;
mod ledgers;
mod memory;
mod merkle;
mod model;
#[cfg(feature = "model")]
mod nli;
mod pairs;
mod prose;
mod retire;
mod status;
mod store;
mod time;
mod util;
