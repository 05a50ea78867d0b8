//! Serves a JSON script (docs/reference/providers.md#fake-llm-server-for-tests) on 127.0.0.1 until killed, printing the port on
//! the first line of stdout. Used by the side-by-side scripts in `bench/`.
//!
//! `cargo run --release -p tackle-testkit --example fake_llm_server -- SCRIPT.json`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use tackle_testkit::{FakeLlm, Script};

#[tokio::main]
async fn main() {
    let path = std::env::args().nth(1).expect("usage: fake_llm_server SCRIPT.json");
    let script =
        Script::from_json(&std::fs::read_to_string(&path).expect("read the script")).expect("parse the script");
    let server = FakeLlm::start(script).await;
    let url = server.openai_base_url();
    let port = url.trim_start_matches("http://127.0.0.1:").trim_end_matches("/v1");
    println!("{port}");
    tokio::signal::ctrl_c().await.ok();
    let failures = server.failures();
    if !failures.is_empty() {
        eprintln!("{}", failures.join("\n"));
    }
}
