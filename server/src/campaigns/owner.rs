//! A campaign's `owner.lock`: held by the server scheduling the campaign, so two servers
//! sharing one state directory never both start its items. The OS releases the lock of a
//! dead process, so a restarted server can tell an abandoned campaign from one another live
//! server is scheduling, whatever happened to pids.

/// The campaign's owner lock (`owner.lock`), taken without waiting.
pub(super) use scimcp_core::lock::try_own;

#[cfg(test)]
mod tests {
    use super::try_own;

    #[test]
    fn one_owner_at_a_time_and_free_again_once_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = try_own(dir.path()).unwrap();
        assert!(first.is_some(), "a fresh campaign has no owner");
        // A second open file description stands for another server: the lock is per open
        // file, so this is refused exactly as another process would be.
        assert!(
            try_own(dir.path()).unwrap().is_none(),
            "a campaign with a live owner was taken twice"
        );
        drop(first);
        assert!(
            try_own(dir.path()).unwrap().is_some(),
            "the lock of an owner that went away was not released"
        );
    }

    #[test]
    fn a_missing_campaign_directory_is_an_error_not_ownership() {
        let dir = tempfile::tempdir().unwrap();
        assert!(try_own(&dir.path().join("gone")).is_err());
    }
}
