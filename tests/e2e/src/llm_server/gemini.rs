//! Gemini API wire format (`generativelanguage.googleapis.com`, as Gemini CLI calls it with
//! `GOOGLE_GEMINI_BASE_URL`): `models/{model}:streamGenerateContent?alt=sse` answers with
//! server-sent events, each `data:` line one `GenerateContentResponse` JSON object; the last
//! carries `finishReason` and `usageMetadata`. Tool calls are `functionCall` parts (the whole
//! call in one part; Gemini does not stream arguments).
//!
//! Gemini CLI also makes side calls that are not the conversation: non-streaming
//! `:generateContent` with `generationConfig.responseMimeType: application/json` (model
//! routing, the next-speaker check) and `:countTokens`. [`side_reply`] answers those so they
//! do not consume scripted turns.
//!
//! Like the real API, the server refuses a conversation whose function responses do not
//! pair one for one with the function calls of the model turn before them
//! ([`refuse_unpaired`]): HTTP 400 `INVALID_ARGUMENT`. Gemini CLI 0.61's `--resume` sends
//! such a request (google-gemini/gemini-cli#29365), and a test must fail where the product
//! fails.

use super::turn::pieces;
use super::{RecordedRequest, Reply, Turn};
use serde_json::{Value, json};
use std::fmt::Write as _;

const MODEL_VERSION: &str = "gemini-2.5-pro";

fn usage(turn: &Turn) -> Value {
    json!({
        "promptTokenCount": turn.input_tokens,
        "candidatesTokenCount": turn.output_tokens,
        "totalTokenCount": turn.input_tokens + turn.output_tokens,
        "cachedContentTokenCount": turn.cache_read_tokens,
    })
}

fn chunk(out: &mut String, parts: &Value, finish: Option<&str>, turn: &Turn) {
    let mut candidate = json!({"content": {"parts": parts, "role": "model"}, "index": 0});
    let mut response = json!({"modelVersion": MODEL_VERSION, "responseId": "scripted"});
    if let Some(reason) = finish {
        candidate["finishReason"] = json!(reason);
        response["usageMetadata"] = usage(turn);
    }
    response["candidates"] = json!([candidate]);
    let _ = write!(out, "data: {response}\r\n\r\n");
}

/// The full event stream of `turn`. Invalid argument JSON is sent as a string argument.
pub fn sse(turn: &Turn) -> String {
    let mut out = String::new();
    let text_pieces = pieces(&turn.text, 16);
    let finish = turn.stop_reason.as_deref().unwrap_or("STOP");
    let calls: Vec<Value> = turn
        .tool_calls
        .iter()
        .map(|(id, name, args)| {
            let args: Value = serde_json::from_str(args).unwrap_or_else(|_| json!({"raw": args}));
            json!({"functionCall": {"id": id, "name": name, "args": args}})
        })
        .collect();
    let last_text = text_pieces.len().checked_sub(1);
    for (i, piece) in text_pieces.iter().enumerate() {
        let end = calls.is_empty() && Some(i) == last_text;
        chunk(
            &mut out,
            &json!([{"text": piece}]),
            end.then_some(finish),
            turn,
        );
    }
    if !calls.is_empty() {
        chunk(&mut out, &Value::Array(calls), Some(finish), turn);
    } else if text_pieces.is_empty() {
        chunk(&mut out, &json!([{"text": ""}]), Some(finish), turn);
    }
    out
}

/// `turn` as a streamed reply.
pub fn reply(turn: &Turn) -> Reply {
    Reply::sse(&sse(turn))
}

/// A streamed text-only reply.
pub fn text_turn(text: &str) -> Reply {
    reply(&Turn::text(text))
}

/// A streamed reply of function calls `(name, argument JSON)`.
pub fn tool_call_turn(calls: &[(&str, &str)]) -> Reply {
    let with_ids: Vec<(String, &str, &str)> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| (format!("call_{i}"), *name, *args))
        .collect();
    let refs: Vec<(&str, &str, &str)> = with_ids
        .iter()
        .map(|(id, name, args)| (id.as_str(), *name, *args))
        .collect();
    reply(&Turn::tool_calls(&refs))
}

/// A non-streaming `generateContent` answer whose text is `text`.
pub fn content_reply(text: &str) -> Reply {
    let turn = Turn::text(text);
    Reply::json(
        200,
        &json!({
            "candidates": [{"content": {"parts": [{"text": text}], "role": "model"},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": usage(&turn),
            "modelVersion": MODEL_VERSION,
        }),
    )
}

/// The answer to a Gemini CLI side call, or `None` for a conversation turn (which takes the
/// next scripted reply). JSON-mode calls get one object that satisfies the schemas Gemini
/// CLI asks for: the next-speaker check (the user speaks next) and both model routers (a
/// simple task, the default model).
pub fn side_reply(request: &RecordedRequest) -> Option<Reply> {
    if request.path.contains(":countTokens") {
        return Some(Reply::json(200, &json!({"totalTokens": 1843})));
    }
    let json_mode =
        request.body["generationConfig"]["responseMimeType"].as_str() == Some("application/json");
    let streaming = request.path.contains(":streamGenerateContent");
    if !json_mode && streaming {
        return None;
    }
    let answer = json!({
        "reasoning": "scripted test server",
        "next_speaker": "user",
        "model_choice": "pro",
        "complexity_reasoning": "scripted test server",
        "complexity_score": 1,
    });
    if streaming {
        let mut out = String::new();
        chunk(
            &mut out,
            &json!([{"text": answer.to_string()}]),
            Some("STOP"),
            &Turn::text(""),
        );
        return Some(Reply::sse(&out));
    }
    Some(content_reply(&answer.to_string()))
}

/// What the real API says about a user turn whose function responses do not match the
/// function calls of the model turn before it.
pub const UNPAIRED_MESSAGE: &str = "Please ensure that the number of function response parts \
is equal to the number of function call parts of the function call turn.";

/// The API's 400 for a conversation request (`:generateContent`, `:streamGenerateContent`)
/// whose `contents` break the pairing rule: every turn holding `functionResponse` parts must
/// follow a model turn with exactly as many `functionCall` parts. `None` for a well-formed
/// request, or one that is not a conversation.
pub fn refuse_unpaired(request: &RecordedRequest) -> Option<Reply> {
    if !request.path.contains(":generateContent")
        && !request.path.contains(":streamGenerateContent")
    {
        return None;
    }
    let contents = request.body["contents"].as_array()?;
    let count = |content: &Value, key: &str| {
        content["parts"].as_array().map_or(0, |parts| {
            parts.iter().filter(|p| p.get(key).is_some()).count()
        })
    };
    let unpaired = contents.iter().enumerate().find_map(|(i, content)| {
        let responses = count(content, "functionResponse");
        if responses == 0 {
            return None;
        }
        let calls = i
            .checked_sub(1)
            .and_then(|before| contents.get(before))
            .map_or(0, |before| count(before, "functionCall"));
        (calls != responses).then_some((i, calls, responses))
    })?;
    let (index, calls, responses) = unpaired;
    Some(Reply::json(
        400,
        &json!({"error": {
            "code": 400,
            "message": format!(
                "{UNPAIRED_MESSAGE} (scripted server: contents[{index}] has {responses} function \
                 responses for {calls} function calls)"
            ),
            "status": "INVALID_ARGUMENT",
        }}),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(body: &str) -> Vec<Value> {
        body.split("\r\n\r\n")
            .filter_map(|e| e.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    #[test]
    fn text_streams_in_pieces_and_the_last_event_finishes() {
        let all = events(&sse(&Turn::text("Hello from the scripted Gemini model.")));
        assert!(all.len() > 1);
        let text: String = all
            .iter()
            .map(|e| {
                e["candidates"][0]["content"]["parts"][0]["text"]
                    .as_str()
                    .unwrap()
            })
            .collect();
        assert_eq!(text, "Hello from the scripted Gemini model.");
        let last = all.last().unwrap();
        assert_eq!(last["candidates"][0]["finishReason"], "STOP");
        assert_eq!(last["usageMetadata"]["promptTokenCount"], 1843);
        assert!(all[0]["candidates"][0].get("finishReason").is_none());
    }

    #[test]
    fn function_calls_carry_parsed_arguments() {
        let turn = Turn::tool_calls(&[("c1", "write_file", r#"{"file_path": "a.txt"}"#)]);
        let all = events(&sse(&turn));
        let call = &all.last().unwrap()["candidates"][0]["content"]["parts"][0]["functionCall"];
        assert_eq!(call["name"], "write_file");
        assert_eq!(call["args"]["file_path"], "a.txt");
    }

    fn conversation(contents: &Value) -> RecordedRequest {
        let body = json!({"contents": contents});
        RecordedRequest {
            method: "POST".into(),
            path: "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse".into(),
            headers: Vec::new(),
            raw_body: body.to_string(),
            body,
            received: std::time::Instant::now(),
        }
    }

    fn call(id: &str) -> Value {
        json!({"functionCall": {"id": id, "name": "write_file", "args": {}}})
    }

    fn response(id: &str) -> Value {
        json!({"functionResponse": {"id": id, "name": "write_file", "response": {"output": "ok"}}})
    }

    #[test]
    fn function_responses_must_pair_with_the_calls_before_them() {
        let user = json!({"role": "user", "parts": [{"text": "write a.txt"}]});
        let model = json!({"role": "model", "parts": [call("call_0")]});
        let paired = conversation(&json!([
            user,
            model,
            {"role": "user", "parts": [response("call_0")]},
        ]));
        assert!(refuse_unpaired(&paired).is_none());
        // What Gemini CLI 0.61 sends after `--resume`: the response twice.
        let doubled = conversation(&json!([
            user,
            model,
            {"role": "user", "parts": [response("call_0"), response("call_0")]},
        ]));
        let refused = refuse_unpaired(&doubled).expect("refused");
        let super::super::reply::Body::Full(bytes) = &refused.body else {
            panic!("a whole JSON body")
        };
        let body: Value = serde_json::from_slice(bytes).unwrap();
        assert_eq!(refused.status, 400);
        assert_eq!(body["error"]["code"], 400);
        assert_eq!(body["error"]["status"], "INVALID_ARGUMENT");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.starts_with(UNPAIRED_MESSAGE), "{message}");
        assert!(
            message.contains("contents[2] has 2 function responses for 1"),
            "{message}"
        );
        // A response with no call before it is refused too.
        let orphan = conversation(&json!([{"role": "user", "parts": [response("call_0")]}]));
        assert!(refuse_unpaired(&orphan).is_some());
        // Not a conversation request: not this rule's business.
        let mut count = doubled.clone();
        count.path = "/v1beta/models/gemini-2.5-pro:countTokens".into();
        assert!(refuse_unpaired(&count).is_none());
    }
}
