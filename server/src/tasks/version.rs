//! Which protocol a request speaks, below the task methods (mod.rs) and the person's
//! confirmation (confirm.rs), which both ask.

use rmcp::RoleServer;
use rmcp::model::ProtocolVersion;
use rmcp::service::RequestContext;

/// True for protocol 2026-07-28 or later (ISO dates compare like the days they name).
pub fn modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}
