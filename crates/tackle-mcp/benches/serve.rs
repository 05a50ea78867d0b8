//! `tools/call` of a trivial tool through `tackle mcp serve`'s stdio transport, one client,
//! sequential, in process (issue 7 target: ≥ 5,000 calls/s). The client writes one JSON-RPC
//! line and reads the answer line before sending the next, over a pipe, so the figure is the
//! whole server path: the gate, rmcp's dispatch, the executor, the result mapping and the
//! line writer. Criterion reports the time per call; calls/s is its inverse.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use schemars::JsonSchema;
use serde::Deserialize;
use tackle_core::{
    Executor, Registry, Tool, ToolContext, ToolError, ToolOutput, ToolSession, ToolSessionConfig, ToolSpec,
};
use tackle_mcp::server::{McpServer, ServerOptions};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EchoInput {
    /// The text to echo.
    text: String,
}

struct Echo;

impl Tool for Echo {
    type Input = EchoInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("echo", "Echo the text.").read_only().concurrency_safe()
    }

    async fn call(&self, input: EchoInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(input.text))
    }
}

fn calls(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut registry = Registry::new();
    registry.register(&["default"], || Echo);
    let selection = registry.select("echo", "echo").unwrap();
    let config = ToolSessionConfig::new(dir.path());
    let server = McpServer::new(
        Arc::new(move || Ok(ToolSession::new(config.clone(), registry.instantiate(&selection)))),
        Executor::default(),
        ServerOptions::default(),
    );
    let (client, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    runtime.spawn(async move { server.serve_io(server_read, server_write).await });
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut reader = BufReader::new(client_read);
    let mut line = String::new();
    runtime.block_on(async {
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
        client_write.write_all(format!("{init}\n").as_bytes()).await.unwrap();
        reader.read_line(&mut line).await.unwrap();
        client_write.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await.unwrap();
    });

    let mut id = 0u64;
    let mut group = c.benchmark_group("mcp_stdio");
    group.throughput(Throughput::Elements(1));
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("tools_call_echo_sequential", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let started = Instant::now();
                for _ in 0..iters {
                    id += 1;
                    let request = format!(
                        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"hi\"}}}}}}\n"
                    );
                    client_write.write_all(request.as_bytes()).await.unwrap();
                    line.clear();
                    reader.read_line(&mut line).await.unwrap();
                    assert!(line.contains("\"isError\":false"), "{line}");
                }
                started.elapsed()
            })
        });
    });
    group.finish();
}

criterion_group!(benches, calls);
criterion_main!(benches);
