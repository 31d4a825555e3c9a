//! RelayClient against a real gateway (programs/gateway.ts, embedded storage in a temp DATA_DIR) and the fake
//! provider (programs/fake-provider.ts, streaming in 5-character pieces so aliases are cut across frames), started
//! as child processes on loopback ports and stopped by PID. Needs the repository's node_modules (npm ci).
use privacy_relay::tokeniser::session::NameModel;
use privacy_relay_client::{ClientOptions, RelayClient};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PROMPT: &str = "Write to jane.doe@example.com and call +44 20 7946 0958 about IBAN DE89 3704 0044 0532 0130 00.";
const ORIGINALS: [&str; 3] = ["jane.doe@example.com", "+44 20 7946 0958", "DE89 3704 0044 0532 0130 00"];

struct Proc {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Proc {
    fn start(repo: &PathBuf, args: &[&str], env: &[(String, String)]) -> Proc {
        let node = repo.join("node_modules/.bin/node");
        let mut cmd = Command::new(node);
        cmd.args(args).current_dir(repo).stdout(Stdio::piped()).stderr(Stdio::piped()).env_remove("DATABASE_URL").env_remove("REDIS_URL");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("node starts");
        let lines = Arc::new(Mutex::new(Vec::new()));
        for out in [child.stdout.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>), child.stderr.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>)] {
            let lines = lines.clone();
            if let Some(out) = out {
                std::thread::spawn(move || {
                    for line in BufReader::new(out).lines().map_while(Result::ok) {
                        lines.lock().unwrap().push(line);
                    }
                });
            }
        }
        Proc { child, lines }
    }

    fn wait_for(&mut self, needle: &str, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            for line in self.lines.lock().unwrap().iter() {
                if line.contains(needle) {
                    if let Ok(v) = serde_json::from_str::<Value>(line) {
                        return v;
                    }
                }
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("process exited ({status}):\n{}", self.lines.lock().unwrap().join("\n"));
            }
            if Instant::now() > deadline {
                panic!("no {needle:?} within {timeout:?}:\n{}", self.lines.lock().unwrap().join("\n"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn received(http: &reqwest::Client, provider: &str) -> Vec<String> {
    let v: Value = http.get(format!("{provider}/_fake/received")).send().await.unwrap().json().await.unwrap();
    v["requests"].as_array().unwrap().iter().filter(|r| r["path"].as_str().unwrap_or("").starts_with("/v1/")).map(|r| r["body"].as_str().unwrap_or("").to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relay_client_against_a_real_gateway() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..").canonicalize().unwrap();
    if !repo.join("node_modules/.bin/node").exists() {
        assert!(std::env::var("PRIVACY_RELAY_SKIP_E2E").is_ok(), "node_modules is missing: run npm ci at the repository root (or set PRIVACY_RELAY_SKIP_E2E=1)");
        eprintln!("skipped: no node_modules");
        return;
    }
    let data_dir = std::env::temp_dir().join(format!("pr-rust-sdk-{}", std::process::id()));
    std::fs::create_dir_all(&data_dir).unwrap();
    let mut provider = Proc::start(&repo, &["programs/fake-provider.ts", "--host", "127.0.0.1", "--port", "0", "--stream-piece-chars", "5"], &[]);
    let provider_url = provider.wait_for("fake provider listening", Duration::from_secs(60))["url"].as_str().unwrap().to_string();
    let env: Vec<(String, String)> = [
        ("DATA_DIR", data_dir.to_str().unwrap()),
        ("PORT", "0"),
        ("HOST", "127.0.0.1"),
        ("LOCAL_PROVIDER_URL", provider_url.as_str()),
        ("PAYMENTS_PROVIDER", "dev"),
        ("TRUSTED_PROXIES", "127.0.0.1"),
        ("LOG_LEVEL", "info"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let mut gateway = Proc::start(&repo, &["programs/gateway.ts"], &env);
    let listening = gateway.wait_for("gateway listening", Duration::from_secs(150));
    let url = listening["annotations"]["url"].as_str().unwrap().replace("0.0.0.0", "127.0.0.1");
    let http = reqwest::Client::new();

    // A self-service key, funded through the admin API.
    let key: Value = http.post(format!("{url}/api/v1/self-service/key")).header("x-forwarded-for", "198.18.7.1").json(&json!({})).send().await.unwrap().json().await.unwrap();
    let api_key = key["api_key"].as_str().expect("api_key").to_string();
    let admin = std::fs::read_to_string(data_dir.join("admin-token")).unwrap().trim().to_string();
    let credit = http.post(format!("{url}/api/admin/wallets/credit")).bearer_auth(&admin).json(&json!({"key_prefix": key["key_prefix"], "usd": "10"})).send().await.unwrap();
    assert!(credit.status().is_success(), "credit: {}", credit.text().await.unwrap());

    let client = RelayClient::with_options(&url, &api_key, ClientOptions { name_model: NameModel::Off, retries: 0, ..Default::default() }).unwrap();
    let reset = || async { http.post(format!("{provider_url}/_fake/reset")).send().await.unwrap() };

    // Chat, JSON: only aliases leave; the answer comes back with the originals; the receipt verifies offline.
    reset().await;
    let answer = client.chat_completions(json!({"model": "local-chat", "messages": [{"role": "user", "content": PROMPT}]})).await.unwrap();
    assert_eq!(answer.body["choices"][0]["message"]["content"], format!("Echo: {PROMPT}"));
    let sent = received(&http, &provider_url).await;
    assert_eq!(sent.len(), 1);
    for original in ORIGINALS {
        assert!(!sent[0].contains(original), "{original} reached the provider");
    }
    assert_eq!(serde_json::from_str::<Value>(&sent[0]).unwrap(), answer.tokenised_request);
    assert!(answer.request_id.is_some());
    assert_eq!(answer.receipt_verified, Some(true), "{:?}", answer.receipt_verification);
    let mut changed = answer.receipt.clone().unwrap();
    changed["output_tokens"] = json!(changed["output_tokens"].as_u64().unwrap() + 1);
    assert!(client.verify_receipt(&changed).await.unwrap().reason.unwrap().starts_with("signature:"));

    // Chat, streamed: aliases cut across 5-character frames come back whole; the trailer's receipt verifies.
    reset().await;
    let mut stream = client.chat_completions_stream(json!({"model": "local-chat", "messages": [{"role": "user", "content": PROMPT}]})).await.unwrap();
    let mut text = String::new();
    while let Some(event) = stream.next().await {
        let event = event.unwrap();
        if let Some(t) = event["choices"].get(0).and_then(|c| c["delta"]["content"].as_str()) {
            assert!(!t.contains('<') || !t.contains("_1_"), "an alias shown: {t}");
            text.push_str(t);
        }
    }
    for rest in stream.flush().values() {
        text.push_str(rest);
    }
    assert_eq!(text, format!("Echo: {PROMPT}"));
    let sent: Value = serde_json::from_str(&received(&http, &provider_url).await[0]).unwrap();
    assert_eq!(sent["stream_options"], json!({"include_usage": true}));
    let receipt = stream.receipt.clone().expect("receipt-v2 trailer");
    assert!(client.verify_receipt(&receipt).await.unwrap().valid);

    // Anthropic messages, streamed.
    let mut stream = client.messages_stream(json!({"model": "local-chat", "max_tokens": 64, "messages": [{"role": "user", "content": PROMPT}]})).await.unwrap();
    let mut text = String::new();
    while let Some(event) = stream.next().await {
        let event = event.unwrap();
        if event["type"] == "content_block_delta" {
            text.push_str(event["delta"]["text"].as_str().unwrap_or(""));
        }
    }
    for rest in stream.flush().values() {
        text.push_str(rest);
    }
    assert!(text.contains(PROMPT), "{text}");

    // Embeddings and models.
    let e = client.embeddings(json!({"model": "local-embed", "input": ["mail jane.doe@example.com"]})).await.unwrap();
    assert!(e.body["data"][0]["embedding"].as_array().map_or(false, |v| !v.is_empty()));
    let models = client.models().await.unwrap();
    assert!(models["data"].as_array().unwrap().iter().any(|m| m["id"] == "local-chat"));

    // Refused on the device by the egress policy: nothing sent.
    reset().await;
    let refused = client.chat_completions(json!({"model": "local-chat", "x_trace_note": "jane", "messages": [{"role": "user", "content": "hi"}]})).await.unwrap_err();
    assert_eq!((refused.status, refused.code.as_str()), (400, "unsupported_field"));
    assert_eq!(refused.details.unwrap()["path"], "/x_trace_note");
    assert!(received(&http, &provider_url).await.is_empty());

    // A wrong key: typed error with status, code and request id.
    let bad = RelayClient::with_options(&url, "svc_notakey", ClientOptions { name_model: NameModel::Off, retries: 0, ..Default::default() }).unwrap();
    let err = bad.chat_completions(json!({"model": "local-chat", "messages": [{"role": "user", "content": "hi"}]})).await.unwrap_err();
    assert_eq!(err.status, 401, "{err}");
    assert!(err.request_id.is_some(), "{err}");

    // A URL that is not a gateway fails the identity probe: nothing is sent there.
    let not_gateway = RelayClient::new(&provider_url, &api_key).unwrap();
    let err = not_gateway.chat_completions(json!({"model": "local-chat", "messages": [{"role": "user", "content": PROMPT}]})).await.unwrap_err();
    assert_eq!(err.code, "gateway_identity_failed", "{err}");

    // REST with the key, the portal token (issued through the admin API) and no credential.
    let portal: Value = http
        .post(format!("{url}/api/admin/portal-tokens"))
        .bearer_auth(&admin)
        .json(&json!({"key_prefix": key["key_prefix"], "abilities": "ability:keys.read,ability:keys.write,ability:billing.read,webhooks.manage,webhooks.read"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let client = RelayClient::with_options(
        &url,
        &api_key,
        ClientOptions { name_model: NameModel::Off, retries: 0, portal_token: portal["token"].as_str().map(str::to_string), ..Default::default() },
    )
    .unwrap();
    let rest = client.rest();
    assert_eq!(rest.self_key().await.unwrap()["key_prefix"], key["key_prefix"]);
    assert!(rest.self_balance().await.unwrap()["balance_usd"].is_string());
    assert!(rest.list_keys(None).await.unwrap()["keys"].as_array().unwrap().iter().any(|k| k["key_prefix"] == key["key_prefix"]));
    assert!(rest.billing_balance().await.unwrap()["balance_usd"].is_string());
    let jti = answer.receipt.as_ref().unwrap()["jti"].as_str().unwrap().to_string();
    assert!(rest.get_receipt(&jti).await.unwrap().to_string().contains(&jti));
    assert_eq!(rest.verify_receipt_online(answer.receipt.clone().unwrap()).await.unwrap()["valid"], true);
    let jwks = client.jwks().await.unwrap();
    let jwks = privacy_relay::verify::Jwks::new(&jwks).unwrap();
    let proof = rest.transparency_proof(&jti).await.unwrap();
    let included = privacy_relay::verify::verify_inclusion_proof(&proof, None, &jwks, answer.receipt.as_ref()).unwrap();
    assert!(included.valid, "{:?}", included.reason);
    let kept = rest.transparency_sth().await.unwrap();
    client.chat_completions(json!({"model": "local-chat", "messages": [{"role": "user", "content": "again"}]})).await.unwrap();
    let consistency = rest.transparency_consistency(kept["tree_size"].as_u64().unwrap(), None).await.unwrap();
    let consistent = privacy_relay::verify::verify_consistency_proof(&consistency, &kept, &jwks, None).unwrap();
    assert!(consistent.valid, "{:?}", consistent.reason);
    let no_portal = RelayClient::new(&url, &api_key).unwrap();
    assert_eq!(no_portal.rest().list_keys(None).await.unwrap_err().code, "configuration_error");

    drop(gateway);
    drop(provider);
    let _ = std::fs::remove_dir_all(&data_dir);
}
