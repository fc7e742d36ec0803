//! One integration test binary; one file per topic, with a shared harness in `util.rs`.

mod classifier;
mod cli;
mod codec;
mod concurrency;
mod corruption;
mod crash;
mod crash_consistency;
mod gates;
mod golden;
mod ingest;
mod limits;
mod merkle;
mod model;
mod replay;
mod store;
mod stories;
mod tlog;
mod util;
