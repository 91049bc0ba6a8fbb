//! The API key: read from the environment, sent in one header, never shown. `Debug`
//! prints stars; the key is registered as a secret, so no byte the runner writes or
//! prints can hold it, and every text that leaves the client passes through [`redact`].

use std::fmt;

/// An API key. Its text is only reachable through [`ApiKey::expose`].
#[derive(Clone)]
pub(crate) struct ApiKey(String);

impl ApiKey {
    /// The key in environment variable `var`, if set and not empty.
    pub(crate) fn from_env(var: &str) -> Option<Self> {
        std::env::var(var)
            .ok()
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty())
            .map(|k| {
                crate::secrets::register(&k);
                Self(k)
            })
    }

    /// A key from text (tests).
    #[cfg(test)]
    pub(crate) fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for the request header only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// `text` with the key, and any long-enough piece of it, replaced by `***` (see
/// `secrets`). Servers echo keys in error bodies, sometimes partly masked.
pub(crate) fn redact(text: &str, key: Option<&ApiKey>) -> String {
    if let Some(key) = key {
        crate::secrets::register(key.expose());
    }
    crate::secrets::scrub(text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_whole_and_partial_keys() {
        let key = ApiKey::new("sk-test-0123456789abcdefXYZ");
        let text = "Incorrect API key provided: sk-test-0123456789abcdefXYZ. Or sk-test-***defXYZ";
        let red = redact(text, Some(&key));
        assert!(!red.contains("0123456789"), "{red}");
        assert!(!red.contains("sk-test-"), "{red}");
        assert_eq!(format!("{key:?}"), "ApiKey(***)");
        assert_eq!(redact("nothing", None), "nothing");
    }
}
