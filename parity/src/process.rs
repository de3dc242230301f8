//! Process-tree facts the cancelled scenarios compare: is any live process left in a
//! process group. Ending one is not done here: the direct side ends its command through
//! [`scimcp_process::Child::terminate`], as the server ends a run.

use std::time::{Duration, Instant};

/// How long a process group may take to disappear after its run ended.
pub const TREE_GRACE: Duration = Duration::from_secs(5);

/// True when no live (non-zombie) process is left in process group `pgid`.
pub fn group_gone(pgid: u32) -> bool {
    !scimcp_process::group_alive(pgid)
}

/// Wait up to [`TREE_GRACE`] for process group `pgid` to have no live process.
pub async fn wait_group_gone(pgid: u32) -> bool {
    let deadline = Instant::now() + TREE_GRACE;
    loop {
        if group_gone(pgid) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
