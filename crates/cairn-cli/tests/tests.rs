//! The command line's tests: one binary that drives `cairn` (`CARGO_BIN_EXE_cairn`), one file
//! per topic, with a shared harness in `util.rs`.

mod cli;
mod concurrency;
mod corruption;
mod crash;
mod import;
mod limits;
mod mcp;
mod postgres;
mod replay;
mod stories;
mod tlog;
mod util;
