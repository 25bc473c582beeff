//! `GET /v1/models`, in both wire formats, from a list a test sets.
//!
//! The answer does not use the reply queue and the request is not in
//! [`LlmServer::requests`](super::LlmServer::requests) (see
//! [`LlmServer::model_requests`](super::LlmServer::model_requests)), so tests that count model
//! requests are unaffected by a client that lists models at start. With no list set, the
//! endpoint answers 404, like a server that has none.
//!
//! The format follows the request: with an `anthropic-version` header, Anthropic's
//! (`data[].id`, `created_at` as RFC 3339, paginated with `limit` / `after_id`, `has_more`,
//! `last_id`); else OpenAI's (`object: "list"`, `data[].id`, `created` in Unix seconds).

use serde_json::{Map, Value, json};

use super::{RecordedRequest, Reply};

/// One listed model.
#[derive(Debug, Clone)]
pub struct ListedModel {
    /// Model id, e.g. `claude-sonnet-4-5-20250929`.
    pub id: String,
    /// Creation time, Unix seconds.
    pub created: u64,
    /// Extra fields copied into the entry, e.g. `{"context_window": 400000}`.
    pub extra: Map<String, Value>,
}

impl ListedModel {
    /// A model created at `created` (Unix seconds).
    pub fn new(id: &str, created: u64) -> Self {
        Self {
            id: id.to_owned(),
            created,
            extra: Map::new(),
        }
    }

    /// Adds an extra field to the entry.
    #[must_use]
    pub fn with(mut self, key: &str, value: Value) -> Self {
        self.extra.insert(key.to_owned(), value);
        self
    }
}

/// True when `request` asks for the model list.
pub(super) fn is_models_request(request: &RecordedRequest) -> bool {
    request.method == "GET"
        && (request.path == "/v1/models" || request.path.starts_with("/v1/models?"))
}

/// The answer to a model list request.
pub(super) fn answer(
    request: &RecordedRequest,
    models: Option<&[ListedModel]>,
    page: usize,
) -> Reply {
    let Some(models) = models else {
        return Reply::json(
            404,
            &json!({"error": {"type": "not_found_error", "message": "no model list here"}}),
        );
    };
    if request.header("anthropic-version").is_some() {
        anthropic_page(request, models, page)
    } else {
        let data: Vec<Value> = models
            .iter()
            .map(|m| {
                let mut entry = json!({"id": m.id, "object": "model", "created": m.created,
                    "owned_by": "scripted"});
                merge(&mut entry, &m.extra);
                entry
            })
            .collect();
        Reply::json(200, &json!({"object": "list", "data": data}))
    }
}

fn anthropic_page(request: &RecordedRequest, models: &[ListedModel], page: usize) -> Reply {
    let query = request.path.split_once('?').map_or("", |(_, q)| q);
    let param = |name: &str| {
        query
            .split('&')
            .filter_map(|pair| pair.split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_owned())
    };
    let limit = param("limit")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(20)
        .min(page);
    let start = param("after_id")
        .and_then(|after| models.iter().position(|m| m.id == after))
        .map_or(0, |i| i + 1);
    let slice: Vec<&ListedModel> = models.iter().skip(start).take(limit).collect();
    let data: Vec<Value> = slice
        .iter()
        .map(|m| {
            let mut entry = json!({"type": "model", "id": m.id, "display_name": m.id,
                "created_at": rfc3339(m.created)});
            merge(&mut entry, &m.extra);
            entry
        })
        .collect();
    Reply::json(
        200,
        &json!({
            "data": data,
            "has_more": start + slice.len() < models.len(),
            "first_id": slice.first().map(|m| m.id.clone()),
            "last_id": slice.last().map(|m| m.id.clone()),
        }),
    )
}

fn merge(entry: &mut Value, extra: &Map<String, Value>) {
    if let Some(object) = entry.as_object_mut() {
        for (k, v) in extra {
            object.insert(k.clone(), v.clone());
        }
    }
}

/// `2025-09-29T00:00:00Z` from Unix seconds (civil-from-days, proleptic Gregorian).
fn rfc3339(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn rfc3339_dates() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(1_759_104_000), "2025-09-29T00:00:00Z");
    }
}
