//! The process's TLS crypto provider: ring, installed once before any HTTPS client is
//! made (the LLM's, an MCP server's). reqwest is built without a provider of its own
//! (its default, aws-lc, is a larger C library: 3.5 MB more binary); a client made
//! before this would panic, so every maker of one calls [`ready`].

use std::sync::Once;

/// Installs ring as the process's default TLS provider, the first time.
pub(crate) fn ready() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        // Already installed (by an embedding program): that one serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_client_can_be_made_once_the_provider_is_ready() {
        super::ready();
        super::ready();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
        assert!(reqwest::Client::builder().build().is_ok());
    }
}
