//! The provider's model list: the default pick, the closest names to a wrong one, and an
//! endpoint without a list.

use super::*;

fn anthropic_models() -> Vec<cp_e2e::ListedModel> {
    use cp_e2e::ListedModel;
    vec![
        ListedModel::new("claude-opus-4-1-20250805", 1_754_352_000),
        ListedModel::new("claude-sonnet-4-20250514", 1_747_180_800),
        ListedModel::new("claude-sonnet-4-5-20250929", 1_759_104_000),
        ListedModel::new("claude-haiku-4-5-20251001", 1_759_276_800),
        ListedModel::new("claude-3-5-haiku-20241022", 1_729_555_200),
    ]
}

#[test]
fn default_model_is_the_newest_listed_sonnet_across_pages() {
    let server = LlmServer::start().unwrap();
    server.set_models(anthropic_models(), 2);
    let config = anthropic_config(&server.url());
    let models = list_models(&config).unwrap();
    assert_eq!(models.len(), 5, "all three pages read");
    let check = check_model(&config, &models);
    assert_eq!(check.config.model, "claude-sonnet-4-5-20250929");
    assert!(check.notice.unwrap().contains("newest listed"));
    assert_eq!(check.config.context_window, 200_000, "from the table");
    let asked = server.model_requests();
    assert_eq!(asked.len(), 3);
    assert_eq!(asked[0].header("x-api-key"), Some("test-key-123"));
    assert_eq!(asked[0].header("anthropic-version"), Some("2023-06-01"));
    assert!(
        asked[1].path.contains("after_id=claude-sonnet-4-20250514"),
        "{}",
        asked[1].path
    );
    assert!(server.requests().is_empty(), "model listing is kept apart");
}

#[test]
fn openai_default_pick_skips_embeddings_and_audio_and_reads_the_window() {
    use cp_e2e::ListedModel;
    let server = LlmServer::start().unwrap();
    server.set_models(
        vec![
            ListedModel::new("gpt-4o", 1_715_367_049),
            ListedModel::new("gpt-4.1", 1_744_316_542).with("context_window", json!(1_047_576)),
            ListedModel::new("text-embedding-3-large", 1_800_000_000),
            ListedModel::new("gpt-4o-realtime-preview", 1_800_000_001),
            ListedModel::new("gpt-4o-mini-tts", 1_800_000_002),
            ListedModel::new("local-llama", 1_800_000_003).with("context_length", json!(32_768)),
        ],
        100,
    );
    let config = openai_config(&server.openai_base_url());
    let models = list_models(&config).unwrap();
    let check = check_model(&config, &models);
    assert_eq!(check.config.model, "gpt-4.1");
    assert_eq!(check.config.context_window, 1_047_576, "from the endpoint");
    assert_eq!(
        server.model_requests()[0].header("authorization"),
        Some("Bearer test-key-123")
    );
    // A configured local model: its window comes from the endpoint's `context_length`.
    let local = ProviderConfig {
        model: "local-llama".into(),
        model_configured: true,
        ..config
    };
    let check = check_model(&local, &models);
    assert_eq!(
        (check.config.model.as_str(), check.config.context_window),
        ("local-llama", 32_768)
    );
    assert!(check.notice.is_none());
}

#[test]
fn a_wrong_model_name_gets_the_closest_listed_names() {
    let server = LlmServer::start().unwrap();
    server.set_models(anthropic_models(), 100);
    let config = ProviderConfig {
        model: "claude-sonet-4-5-20250929".into(),
        model_configured: true,
        ..anthropic_config(&server.url())
    };
    let check = check_model(&config, &list_models(&config).unwrap());
    assert!(check.unknown_model);
    assert_eq!(
        check.config.model, "claude-sonet-4-5-20250929",
        "kept as configured"
    );
    let notice = check.notice.unwrap();
    assert!(
        notice.starts_with(
            "model `claude-sonet-4-5-20250929` is not listed by Anthropic (http://127.0.0.1:"
        ),
        "{notice}"
    );
    assert!(
        notice.contains("closest: claude-sonnet-4-5-20250929, claude-sonnet-4-20250514"),
        "{notice}"
    );
}

#[test]
fn an_endpoint_without_a_model_list_is_a_clear_error() {
    let server = LlmServer::start().unwrap();
    let config = anthropic_config(&server.url());
    let err = list_models(&config).unwrap_err();
    assert!(err.to_string().contains("HTTP 404"), "{err}");
}
