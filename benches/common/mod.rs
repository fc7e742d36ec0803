//! A deterministic, varied agent session shared by the benchmarks.

use cairn::record::Role;

const NOUNS: &[&str] = &[
    "cache",
    "client",
    "scheduler",
    "parser",
    "index",
    "ledger",
    "queue",
    "token",
    "session",
    "worker",
    "router",
    "bucket",
    "schema",
    "migration",
    "socket",
    "buffer",
    "config",
    "proxy",
    "profile",
    "report",
    "invoice",
    "account",
    "template",
    "pipeline",
    "artifact",
    "manifest",
    "checkpoint",
    "snapshot",
    "replica",
    "shard",
    "tenant",
    "webhook",
    "cursor",
    "batch",
];
const VERBS: &[&str] = &[
    "moved",
    "renamed",
    "split",
    "merged",
    "cached",
    "retried",
    "validated",
    "rewrote",
    "benchmarked",
    "profiled",
    "documented",
    "deleted",
    "archived",
    "throttled",
    "sharded",
];

/// The role and text of turn `i`: every span mentions its own few nouns, paths and numbers.
pub fn text(i: u64) -> (Role, String) {
    let mut x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xdead_beef;
    let mut pick = |list: &[&'static str]| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        list[(x % list.len() as u64) as usize]
    };
    let (a, b, c, v) = (pick(NOUNS), pick(NOUNS), pick(NOUNS), pick(VERBS));
    match i % 4 {
        0 => (Role::User, format!("Could you look at how the {a} talks to the {b}, and check the {c} path in src/{a}/{b}.rs?")),
        1 => (Role::Assistant, format!("I {v} the {a} handling into src/{a}/{b}.rs; the {c} now owns its retry budget.")),
        2 => (Role::Tool, format!("$ cargo test -p {a}\nrunning {} tests\ntest {b}::{c} ... ok\ntest result: ok. {} passed; 0 failed", i % 40 + 3, i % 40 + 3)),
        _ => (Role::Assistant, format!("The {a} service {i} reads the {b} through the {c} pooler.")),
    }
}
