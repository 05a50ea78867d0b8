//! An image `read_file` returns reaches the model's NEXT request on both wires (an `image`
//! block in the Anthropic `tool_result`; an `image_url` data URL in a user message after the
//! OpenAI tool messages), and does not when the model takes no images (`vision = false`) or
//! calls tools in text; the trajectory records each image once.

use crate::common;

use base64::Engine as _;
use common::{BOTH, RunSpec, run};
use serde_json::{Value, json};
use tackle_agent::{CallFormat, RunStatus};
use tackle_calls::TextFormat;
use tackle_testkit::{Expect, FakeLlm, Protocol, Reply, Script, Turn};

fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| image::Rgb([x as u8, y as u8, 7]));
    let mut out = Vec::new();
    image::DynamicImage::from(image).write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
    out
}

fn script(first: Reply) -> Script {
    Script::new([
        Turn::reply(first),
        Turn::reply(Reply::text("I see a gradient.").call("c2", "task_done", json!({})))
            .expect(Expect::result("c1", "shot.png: image/png 64×48, shown at 64×48")),
    ])
}

/// The image parts of a request body, as (media type, base64 data).
fn images_in(protocol: Protocol, body: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        let Some(parts) = message["content"].as_array() else { continue };
        for part in parts {
            match protocol {
                Protocol::OpenAi => {
                    assert_eq!(message["role"], "user", "images only in user messages: {message}");
                    if let Some(url) = part.pointer("/image_url/url").and_then(Value::as_str) {
                        let (head, data) = url.split_once(";base64,").unwrap();
                        found.push((head.trim_start_matches("data:").to_owned(), data.to_owned()));
                    }
                }
                Protocol::Anthropic => {
                    for block in part["content"].as_array().into_iter().flatten() {
                        if block["type"] == "image" {
                            assert_eq!(part["type"], "tool_result");
                            assert_eq!(block["source"]["type"], "base64");
                            found.push((
                                block["source"]["media_type"].as_str().unwrap().to_owned(),
                                block["source"]["data"].as_str().unwrap().to_owned(),
                            ));
                        }
                    }
                }
            }
        }
    }
    found
}

#[tokio::test]
async fn a_read_image_reaches_the_next_request_on_both_wires_and_only_with_vision() {
    let bytes = png(64, 48);
    let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
    for protocol in BOTH {
        for vision in [true, false] {
            let server = FakeLlm::start(script(Reply::text("Looking.").call(
                "c1",
                "read_file",
                json!({"file_path": "shot.png"}),
            )))
            .await;
            let mut spec = RunSpec::new(protocol);
            spec.files = vec![("shot.png", bytes.clone())];
            spec.vision = vision;
            let ran = run(&server, spec, "what is in shot.png?").await;
            server.assert_clean();
            assert_eq!(ran.outcome.status, RunStatus::Success, "{protocol:?}: {}", ran.outcome.final_result);
            let requests = server.requests();
            assert_eq!(requests.len(), 2);
            assert!(images_in(protocol, &requests[0].body).is_empty());
            let sent = images_in(protocol, &requests[1].body);
            if vision {
                assert_eq!(sent, vec![("image/png".to_owned(), encoded.clone())], "{protocol:?}");
                if protocol == Protocol::OpenAi {
                    let messages = requests[1].body["messages"].as_array().unwrap();
                    let tool = messages.iter().position(|m| m["role"] == "tool").unwrap();
                    let user = &messages[tool + 1];
                    assert_eq!(
                        user["content"][0],
                        json!({"type": "text", "text": "The image returned by tool call c1:"})
                    );
                }
            } else {
                assert!(sent.is_empty(), "{protocol:?}: {sent:?}");
                let body = requests[1].body.to_string();
                assert!(!body.contains(&encoded[..40]) && !body.contains("image_url"), "{body}");
                assert!(body.contains("shot.png: image/png 64×48, shown at 64×48"), "{body}");
            }
            // The trajectory keeps the image once, whatever the model was sent.
            let output = ran.events("tool_output").into_iter().find(|e| e["call_id"] == "c1").unwrap().clone();
            assert_eq!(output["images"][0]["mime_type"], "image/png");
            assert_eq!(output["images"][0]["data"], encoded.as_str());
            assert_eq!(output["images"][0]["sha256"].as_str().unwrap().len(), 64);
        }
    }
}

#[tokio::test]
async fn request_bodies_in_a_full_trajectory_name_the_image_by_its_digest() {
    let bytes = png(64, 48);
    let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
    for protocol in BOTH {
        let server =
            FakeLlm::start(script(Reply::text("Looking.").call("c1", "read_file", json!({"file_path": "shot.png"}))))
                .await;
        let mut spec = RunSpec::new(protocol);
        spec.files = vec![("shot.png", bytes.clone())];
        spec.trajectory_full = true;
        let ran = run(&server, spec, "what is in shot.png?").await;
        server.assert_clean();
        let digest = ran.events("tool_output")[0]["images"][0]["sha256"].as_str().unwrap().to_owned();
        let second = ran.events("llm_request")[1]["request"].to_string();
        assert!(second.contains(&format!("sha256:{digest}")), "{protocol:?}: {second}");
        assert!(!second.contains(&encoded[..40]), "{protocol:?}: the data is not repeated");
        // Exactly one copy of the data in the whole file.
        let whole: String = ran.trajectory.iter().map(Value::to_string).collect();
        assert_eq!(whole.matches(&encoded[..40]).count(), 1, "{protocol:?}");
    }
}

#[tokio::test]
async fn text_call_formats_get_the_text_line_only() {
    let bytes = png(64, 48);
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("Looking.\n@read_file(c1): {\"file_path\": \"shot.png\"}\n")),
        Turn::reply(Reply::text("Done.\n@task_done(d1): {}\n"))
            .expect(Expect::last_user_contains("shot.png: image/png 64×48, shown at 64×48")),
    ]))
    .await;
    let mut spec = RunSpec::new(Protocol::Anthropic);
    spec.files = vec![("shot.png", bytes)];
    spec.format = CallFormat::Text(TextFormat::Tool);
    let ran = run(&server, spec, "look").await;
    server.assert_clean();
    assert_eq!(ran.outcome.status, RunStatus::Success, "{}", ran.outcome.final_result);
    let body = server.requests()[1].body.to_string();
    assert!(!body.contains("\"image\"") && !body.contains("base64"), "{body}");
}

#[tokio::test]
async fn a_resumed_conversation_gets_its_images_back_from_the_one_recorded_copy() {
    let bytes = png(64, 48);
    let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let server =
        FakeLlm::start(script(Reply::text("Looking.").call("c1", "read_file", json!({"file_path": "shot.png"})))).await;
    let mut spec = RunSpec::new(Protocol::Anthropic);
    spec.files = vec![("shot.png", bytes)];
    let ran = run(&server, spec, "what is in shot.png?").await;
    server.assert_clean();
    // The conversation event refers to the image the tool_output event holds.
    let conversation = ran.events("conversation")[0].to_string();
    assert!(!conversation.contains(&encoded[..40]), "{conversation}");
    assert!(conversation.contains("sha256:"), "{conversation}");
    let path = ran.workspace.path().join(".tackle/trajectories/run.jsonl");
    let messages = tackle_agent::trajectory::conversation(&path).unwrap();
    let restored: Vec<String> = messages
        .iter()
        .filter_map(|message| match message {
            tackle_llm::Message::User { parts } => Some(parts),
            tackle_llm::Message::Assistant(_) => None,
        })
        .flatten()
        .filter_map(|part| match part {
            tackle_llm::UserPart::ToolResult(result) => Some(result.images.iter().map(|image| image.data.clone())),
            tackle_llm::UserPart::Text { .. } => None,
        })
        .flatten()
        .collect();
    assert_eq!(restored, vec![encoded]);
}
