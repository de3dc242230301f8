//! The signals that stop a server: Ctrl-C (SIGINT) everywhere, and SIGTERM on Unix (what
//! service managers, `kill` and most clients send).

/// Resolves when the process is asked to stop.
pub(crate) async fn signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(e) => {
                tracing::warn!("cannot watch SIGTERM ({e}); only Ctrl-C stops the server cleanly");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
