//! The REST capability set: keys, receipts, transparency, webhooks, billing, self-service.
//! Calls marked portal take the client's portal token (`ClientOptions::portal_token`), key calls the API key, none
//! neither. Writes carry an Idempotency-Key; a key or token is only sent after the gateway identity probe passed.

use crate::{local, RelayClient, RelayError};
use serde_json::{json, Value};

/// Which credential a call takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    None,
    Key,
    Portal,
}

fn q(s: &str) -> String {
    s.bytes()
        .map(|b| if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

fn query(pairs: &[(&str, Option<String>)]) -> String {
    let parts: Vec<String> = pairs.iter().filter_map(|(k, v)| v.as_ref().map(|v| format!("{}={}", q(k), q(v)))).collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("?{}", parts.join("&"))
    }
}

/// The REST API of one client: `client.rest()`.
pub struct Rest<'c> {
    pub(crate) client: &'c RelayClient,
}

impl Rest<'_> {
    /// Any REST call: method, path (with its query), the credential it takes, an optional JSON body.
    pub async fn call(&self, method: &str, path: &str, auth: Auth, body: Option<Value>) -> Result<Value, RelayError> {
        self.client.rest_call(method, path, auth, body).await
    }

    // Keys (portal token).
    pub async fn create_key(&self, body: Value) -> Result<Value, RelayError> {
        self.call("POST", "/api/keys", Auth::Portal, Some(body)).await
    }
    pub async fn list_keys(&self, org_id: Option<&str>) -> Result<Value, RelayError> {
        self.call("GET", &format!("/api/v1/keys{}", query(&[("org_id", org_id.map(str::to_string))])), Auth::Portal, None).await
    }
    pub async fn update_key(&self, key_id: &str, changes: Value) -> Result<Value, RelayError> {
        self.call("PATCH", &format!("/api/keys/{}", q(key_id)), Auth::Portal, Some(changes)).await
    }
    pub async fn rotate_key(&self, key_id: &str) -> Result<Value, RelayError> {
        self.call("POST", &format!("/api/keys/{}/rotate", q(key_id)), Auth::Portal, Some(json!({}))).await
    }
    pub async fn revoke_key(&self, key_id: &str) -> Result<Value, RelayError> {
        self.call("POST", &format!("/api/keys/{}/revoke", q(key_id)), Auth::Portal, Some(json!({}))).await
    }

    // Receipts and transparency.
    pub async fn verify_receipt_online(&self, envelope: Value) -> Result<Value, RelayError> {
        self.call("POST", "/api/v1/receipts/verify", Auth::None, Some(envelope)).await
    }
    pub async fn list_receipts(&self, limit: Option<u32>, cursor: Option<&str>) -> Result<Value, RelayError> {
        let path = format!("/api/v1/receipts{}", query(&[("limit", limit.map(|l| l.to_string())), ("cursor", cursor.map(str::to_string))]));
        self.call("GET", &path, Auth::Portal, None).await
    }
    pub async fn get_receipt(&self, jti: &str) -> Result<Value, RelayError> {
        self.call("GET", &format!("/api/v1/receipts/{}", q(jti)), Auth::Portal, None).await
    }
    pub async fn countersign(&self, body: Value) -> Result<Value, RelayError> {
        self.call("POST", "/api/v1/receipts/countersign", Auth::Key, Some(body)).await
    }
    pub async fn transparency_sth(&self) -> Result<Value, RelayError> {
        self.call("GET", "/api/v1/transparency/sth", Auth::None, None).await
    }
    pub async fn transparency_proof(&self, jti: &str) -> Result<Value, RelayError> {
        self.call("GET", &format!("/api/v1/transparency/proof/{}", q(jti)), Auth::None, None).await
    }
    pub async fn transparency_consistency(&self, first: u64, second: Option<u64>) -> Result<Value, RelayError> {
        let path = format!("/api/v1/transparency/consistency{}", query(&[("first", Some(first.to_string())), ("second", second.map(|s| s.to_string()))]));
        self.call("GET", &path, Auth::None, None).await
    }

    // Webhooks (portal token).
    pub async fn create_webhook_endpoint(&self, url: &str, events: Option<Vec<String>>) -> Result<Value, RelayError> {
        let mut body = json!({ "url": url });
        if let Some(e) = events {
            body["events"] = json!(e);
        }
        self.call("POST", "/api/v1/webhooks/endpoints", Auth::Portal, Some(body)).await
    }
    pub async fn list_webhook_endpoints(&self) -> Result<Value, RelayError> {
        self.call("GET", "/api/v1/webhooks/endpoints", Auth::Portal, None).await
    }
    pub async fn get_webhook_endpoint(&self, id: &str) -> Result<Value, RelayError> {
        self.call("GET", &format!("/api/v1/webhooks/endpoints/{}", q(id)), Auth::Portal, None).await
    }
    pub async fn update_webhook_endpoint(&self, id: &str, changes: Value) -> Result<Value, RelayError> {
        self.call("PATCH", &format!("/api/v1/webhooks/endpoints/{}", q(id)), Auth::Portal, Some(changes)).await
    }
    pub async fn delete_webhook_endpoint(&self, id: &str) -> Result<Value, RelayError> {
        self.call("DELETE", &format!("/api/v1/webhooks/endpoints/{}", q(id)), Auth::Portal, None).await
    }
    pub async fn rotate_webhook_secret(&self, id: &str) -> Result<Value, RelayError> {
        self.call("POST", &format!("/api/v1/webhooks/endpoints/{}/rotate", q(id)), Auth::Portal, Some(json!({}))).await
    }
    pub async fn test_webhook_endpoint(&self, id: &str) -> Result<Value, RelayError> {
        self.call("POST", &format!("/api/v1/webhooks/endpoints/{}/test", q(id)), Auth::Portal, Some(json!({}))).await
    }
    pub async fn resume_webhook_endpoint(&self, id: &str) -> Result<Value, RelayError> {
        self.call("POST", &format!("/api/v1/webhooks/endpoints/{}/resume", q(id)), Auth::Portal, Some(json!({}))).await
    }
    pub async fn list_webhook_deliveries(&self, endpoint_id: Option<&str>) -> Result<Value, RelayError> {
        let path = format!("/api/v1/webhooks/deliveries{}", query(&[("endpoint_id", endpoint_id.map(str::to_string))]));
        self.call("GET", &path, Auth::Portal, None).await
    }
    pub async fn get_webhook_delivery(&self, id: &str) -> Result<Value, RelayError> {
        self.call("GET", &format!("/api/v1/webhooks/deliveries/{}", q(id)), Auth::Portal, None).await
    }
    pub async fn replay_webhook_delivery(&self, id: &str) -> Result<Value, RelayError> {
        self.call("POST", &format!("/api/v1/webhooks/deliveries/{}/replay", q(id)), Auth::Portal, Some(json!({}))).await
    }

    // Billing (portal token).
    pub async fn billing_balance(&self) -> Result<Value, RelayError> {
        self.call("GET", "/api/v1/billing/balance", Auth::Portal, None).await
    }
    pub async fn billing_topup(&self, amount_usd: &str) -> Result<Value, RelayError> {
        self.call("POST", "/api/v1/billing/topup", Auth::Portal, Some(json!({ "amount_usd": amount_usd }))).await
    }
    pub async fn redeem_licence(&self, code: &str) -> Result<Value, RelayError> {
        self.call("POST", "/api/v1/billing/redeem-license", Auth::Portal, Some(json!({ "code": code }))).await
    }
    pub async fn billing_ledger(&self) -> Result<Value, RelayError> {
        self.call("GET", "/api/v1/billing/ledger", Auth::Portal, None).await
    }
    pub async fn billing_usage(&self) -> Result<Value, RelayError> {
        self.call("GET", "/api/v1/billing/usage", Auth::Portal, None).await
    }

    // The key itself.
    pub async fn self_balance(&self) -> Result<Value, RelayError> {
        self.call("GET", "/api/v1/self/balance", Auth::Key, None).await
    }
    pub async fn self_usage(&self) -> Result<Value, RelayError> {
        self.call("GET", "/api/v1/self/usage", Auth::Key, None).await
    }
    pub async fn self_key(&self) -> Result<Value, RelayError> {
        self.call("GET", "/api/v1/self/key", Auth::Key, None).await
    }
    pub async fn self_service_key(&self, body: Value) -> Result<Value, RelayError> {
        self.call("POST", "/api/v1/self-service/key", Auth::None, Some(body)).await
    }
}

impl RelayClient {
    /// The REST capability set.
    pub fn rest(&self) -> Rest<'_> {
        Rest { client: self }
    }

    pub(crate) async fn rest_call(&self, method: &str, path: &str, auth: Auth, body: Option<Value>) -> Result<Value, RelayError> {
        let credential = match auth {
            Auth::None => None,
            Auth::Key => Some(self.api_key.clone()),
            Auth::Portal => Some(self.options.portal_token.clone().ok_or_else(|| local(0, "configuration_error", "This call needs a portal token: give portal_token (spt_...) to the client."))?),
        };
        if credential.is_some() {
            self.jwks().await?; // a key or token goes only to a URL that answered the identity probe
        }
        let method = reqwest::Method::from_bytes(method.as_bytes()).map_err(|_| local(0, "invalid_argument", format!("not an HTTP method: {method}")))?;
        let idempotency_key = crate::new_uuid();
        let mut attempt = 0;
        loop {
            let mut req = self.http.request(method.clone(), format!("{}{}", self.gateway_url, path)).header("accept", "application/json");
            if let Some(c) = &credential {
                req = req.header("authorization", format!("Bearer {c}"));
            }
            if method != reqwest::Method::GET {
                req = req.header("idempotency-key", &idempotency_key);
            }
            if let Some(b) = &body {
                req = req.header("content-type", "application/json").body(b.to_string());
            }
            let res = req.send().await;
            let wait = crate::retry_wait(&res, attempt);
            match wait {
                Some(w) if attempt < self.options.retries => {
                    tokio::time::sleep(w).await;
                    attempt += 1;
                }
                _ => {
                    let res = res.map_err(|e| local(0, if e.is_timeout() { "timeout" } else { "connection_error" }, format!("{method} {path}: {e}")))?;
                    if !res.status().is_success() {
                        return Err(crate::error_of(res).await);
                    }
                    let text = res.text().await.map_err(|e| local(0, "connection_error", e.to_string()))?;
                    return if text.trim().is_empty() { Ok(Value::Null) } else { serde_json::from_str(&text).map_err(|e| local(502, "invalid_response", e.to_string())) };
                }
            }
        }
    }
}
