//! ES256 (ECDSA P-256 with SHA-256) over raw 64-byte r||s signatures; JWKs and RFC 7638 thumbprints.

use super::b64::{b64url_decode, b64url_encode};
use super::hashing::sha256;
use super::jcs::object;
use p256::ecdsa::signature::{RandomizedSigner, Signer, Verifier};
use p256::ecdsa::{Signature, SigningKey as P256SigningKey, VerifyingKey};
use p256::EncodedPoint;
use serde_json::Value;

/// A P-256 key that signs (the device attestation key).
#[derive(Clone)]
pub struct SigningKey {
    inner: P256SigningKey,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningKey({})", self.kid())
    }
}

fn field(value: Option<&Value>) -> Option<[u8; 32]> {
    let bytes = b64url_decode(value?.as_str()?)?;
    bytes.try_into().ok()
}

impl SigningKey {
    /// From the 32-byte private scalar.
    pub fn from_bytes(d: &[u8]) -> Result<Self, String> {
        P256SigningKey::from_slice(d).map(|inner| SigningKey { inner }).map_err(|_| "not a P-256 private scalar".to_string())
    }

    /// From a private JWK (`kty` EC, `crv` P-256, `d`, and `x`/`y` that must match `d`).
    pub fn from_private_jwk(jwk: &Value) -> Result<Self, String> {
        if jwk.get("kty").and_then(Value::as_str) != Some("EC") || jwk.get("crv").and_then(Value::as_str) != Some("P-256") {
            return Err("not an EC P-256 JWK".into());
        }
        let d = field(jwk.get("d")).ok_or("the JWK's d is not 32 bytes of base64url")?;
        let key = Self::from_bytes(&d)?;
        let public = key.public_jwk();
        if jwk.get("x").is_some() && (jwk.get("x") != public.get("x") || jwk.get("y") != public.get("y")) {
            return Err("the JWK's x and y are not the public key of its d".into());
        }
        Ok(key)
    }

    /// A fresh random key.
    pub fn generate() -> Self {
        loop {
            let mut d = [0u8; 32];
            getrandom::getrandom(&mut d).expect("operating system randomness");
            if let Ok(key) = Self::from_bytes(&d) {
                return key;
            }
        }
    }

    pub fn d_bytes(&self) -> [u8; 32] {
        self.inner.to_bytes().into()
    }

    fn xy(&self) -> (String, String) {
        let point = self.inner.verifying_key().to_encoded_point(false);
        (b64url_encode(point.x().expect("x")), b64url_encode(point.y().expect("y")))
    }

    /// `{ kty, crv, x, y }`, in that order.
    pub fn public_jwk(&self) -> Value {
        let (x, y) = self.xy();
        object(vec![("kty", "EC".into()), ("crv", "P-256".into()), ("x", x.into()), ("y", y.into())])
    }

    pub fn private_jwk(&self) -> Value {
        let (x, y) = self.xy();
        object(vec![
            ("kty", "EC".into()),
            ("crv", "P-256".into()),
            ("x", x.into()),
            ("y", y.into()),
            ("d", b64url_encode(&self.d_bytes()).into()),
        ])
    }

    pub fn kid(&self) -> String {
        jwk_thumbprint(&self.public_jwk()).unwrap_or_default()
    }

    /// RFC 6979 deterministic signature (no low-S normalisation): reproducible bytes.
    pub fn sign_deterministic(&self, data: &[u8]) -> [u8; 64] {
        let sig: Signature = self.inner.sign(data);
        sig.to_bytes().into()
    }

    /// RFC 6979 with added randomness (hedged): the default for live attestations.
    pub fn sign(&self, data: &[u8]) -> [u8; 64] {
        let sig: Signature = self.inner.sign_with_rng(&mut OsRng, data);
        sig.to_bytes().into()
    }
}

struct OsRng;
impl p256::elliptic_curve::rand_core::RngCore for OsRng {
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.fill_bytes(&mut b);
        u32::from_le_bytes(b)
    }
    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill_bytes(&mut b);
        u64::from_le_bytes(b)
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        getrandom::getrandom(dest).expect("operating system randomness")
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), p256::elliptic_curve::rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}
impl p256::elliptic_curve::rand_core::CryptoRng for OsRng {}

pub fn is_public_jwk(value: Option<&Value>) -> bool {
    match value {
        Some(v @ Value::Object(_)) => {
            v.get("kty").and_then(Value::as_str) == Some("EC")
                && v.get("crv").and_then(Value::as_str) == Some("P-256")
                && field(v.get("x")).is_some()
                && field(v.get("y")).is_some()
        }
        _ => false,
    }
}

/// The verifying key of a public JWK; None when it is not a P-256 point.
pub fn public_key_from_jwk(jwk: &Value) -> Option<VerifyingKey> {
    if !is_public_jwk(Some(jwk)) {
        return None;
    }
    let x = field(jwk.get("x"))?;
    let y = field(jwk.get("y"))?;
    let point = EncodedPoint::from_affine_coordinates(&x.into(), &y.into(), false);
    VerifyingKey::from_encoded_point(&point).ok()
}

/// ES256 over `data` with a raw 64-byte r||s signature; false for anything malformed.
pub fn verify_raw(key: &VerifyingKey, signature: &[u8], data: &[u8]) -> bool {
    if signature.len() != 64 {
        return false;
    }
    match Signature::from_slice(signature) {
        Ok(sig) => key.verify(data, &sig).is_ok(),
        Err(_) => false,
    }
}

/// RFC 7638 thumbprint of an EC public JWK.
pub fn jwk_thumbprint(jwk: &Value) -> Option<String> {
    let member = |k: &str| jwk.get(k).and_then(Value::as_str).map(str::to_string);
    let text = format!(
        "{{\"crv\":{},\"kty\":{},\"x\":{},\"y\":{}}}",
        Value::String(member("crv")?),
        Value::String(member("kty")?),
        Value::String(member("x")?),
        Value::String(member("y")?)
    );
    Some(b64url_encode(&sha256(text.as_bytes())))
}
