//! Confirmations as one-time grants: the `validation_id` a validation or a start preview
//! answers with, and the `preview_id` of a campaign preview, are ids this server process
//! drew at random and holds, each bound to the session that received it and to the content
//! it approves (the request, dataset bytes and plan, summed up in one hash). A grant starts
//! at most one run or campaign, only in that session, only for that content, and only for
//! [`GRANT_TTL`]; ids from another server process, or guessed, are unknown here.
//!
//! A content hash alone was a confirmation anyone could compute, replay or carry to another
//! server (issue 26's third sweep: one `validation_id` started three runs).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a grant stays usable after it was issued.
pub const GRANT_TTL: Duration = Duration::from_secs(15 * 60);
/// Grants held at most; the oldest are forgotten first.
const MAX_GRANTS: usize = 4096;

/// What a grant approves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrantKind {
    /// `start_analysis` of one validated plan (`validation_id`).
    Analysis,
    /// `start_campaign` of one previewed set of items (`preview_id`).
    Campaign,
}

/// One issued grant.
#[derive(Debug, Clone)]
struct Grant {
    kind: GrantKind,
    session: String,
    /// The content hash of what was validated or previewed.
    content: String,
    /// The dataset the validation hashed, for a precise "the dataset changed" answer.
    dataset: Option<(String, String)>,
    issued: Instant,
    used: bool,
}

/// Why a grant cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Never issued by this server process (or forgotten): from another server, or made up.
    Unknown,
    /// Issued to another session.
    OtherSession,
    /// Issued for another kind of action (a campaign's preview_id given as a validation_id).
    OtherKind,
    /// Older than [`GRANT_TTL`].
    Expired,
    /// Already started what it approved.
    Used,
    /// Issued for other content; the dataset's recorded reference and SHA-256 when known.
    OtherContent { dataset: Option<(String, String)> },
}

impl Refusal {
    /// Why, in words for the error message.
    pub fn reason(&self) -> &'static str {
        match self {
            Refusal::Unknown => {
                "it was not issued by this server process (ids from another server, or from before a restart, are not accepted)"
            }
            Refusal::OtherSession => "it was issued to another session",
            Refusal::OtherKind => "it was issued for another kind of action",
            Refusal::Expired => "it has expired (a confirmation is valid for 15 minutes)",
            Refusal::Used => "it has already been used (a confirmation starts one thing once)",
            Refusal::OtherContent { .. } => {
                "it does not match this request: the request, the dataset bytes or the plan differ"
            }
        }
    }
}

/// The grants this server process issued.
#[derive(Debug, Default)]
pub struct Grants {
    held: Mutex<(HashMap<String, Grant>, VecDeque<String>)>,
}

impl Grants {
    /// A grant for `content` in `session`: the one already held when it is unused and
    /// fresh (so validating twice and previewing give one id), else a new one.
    pub fn issue(
        &self,
        kind: GrantKind,
        session: &str,
        content: &str,
        dataset: Option<(String, String)>,
    ) -> String {
        self.issue_at(kind, session, content, dataset, Instant::now())
    }

    fn issue_at(
        &self,
        kind: GrantKind,
        session: &str,
        content: &str,
        dataset: Option<(String, String)>,
        now: Instant,
    ) -> String {
        let mut held = self.held.lock().expect("grants lock");
        let (grants, order) = &mut *held;
        if let Some((id, _)) = grants.iter().find(|(_, g)| {
            g.kind == kind
                && g.session == session
                && g.content == content
                && !g.used
                && now.duration_since(g.issued) < GRANT_TTL
        }) {
            return id.clone();
        }
        let prefix = match kind {
            GrantKind::Analysis => "val",
            GrantKind::Campaign => "prev",
        };
        let id = format!("{prefix}-{}", uuid::Uuid::new_v4().simple());
        grants.insert(
            id.clone(),
            Grant {
                kind,
                session: session.to_string(),
                content: content.to_string(),
                dataset,
                issued: now,
                used: false,
            },
        );
        order.push_back(id.clone());
        while order.len() > MAX_GRANTS {
            if let Some(oldest) = order.pop_front() {
                grants.remove(&oldest);
            }
        }
        id
    }

    /// Check that `id` may approve `content` in `session`, without using it.
    pub fn check(
        &self,
        kind: GrantKind,
        id: &str,
        session: &str,
        content: &str,
    ) -> Result<(), Refusal> {
        self.check_at(kind, id, session, content, Instant::now())
    }

    fn check_at(
        &self,
        kind: GrantKind,
        id: &str,
        session: &str,
        content: &str,
        now: Instant,
    ) -> Result<(), Refusal> {
        let held = self.held.lock().expect("grants lock");
        let grant = held.0.get(id).ok_or(Refusal::Unknown)?;
        Self::usable(grant, kind, session, content, now)
    }

    fn usable(
        grant: &Grant,
        kind: GrantKind,
        session: &str,
        content: &str,
        now: Instant,
    ) -> Result<(), Refusal> {
        if grant.kind != kind {
            return Err(Refusal::OtherKind);
        }
        if grant.session != session {
            return Err(Refusal::OtherSession);
        }
        if now.duration_since(grant.issued) >= GRANT_TTL {
            return Err(Refusal::Expired);
        }
        if grant.used {
            return Err(Refusal::Used);
        }
        if grant.content != content {
            return Err(Refusal::OtherContent {
                dataset: grant.dataset.clone(),
            });
        }
        Ok(())
    }

    /// Use `id` for `content` in `session`: checked and marked used at once, so two calls
    /// racing with one grant start one thing. [`Grants::release`] gives it back when what
    /// it approved could not start after all.
    pub fn take(
        &self,
        kind: GrantKind,
        id: &str,
        session: &str,
        content: &str,
    ) -> Result<(), Refusal> {
        self.take_at(kind, id, session, content, Instant::now())
    }

    fn take_at(
        &self,
        kind: GrantKind,
        id: &str,
        session: &str,
        content: &str,
        now: Instant,
    ) -> Result<(), Refusal> {
        let mut held = self.held.lock().expect("grants lock");
        let grant = held.0.get_mut(id).ok_or(Refusal::Unknown)?;
        Self::usable(grant, kind, session, content, now)?;
        grant.used = true;
        Ok(())
    }

    /// Make a taken grant usable again (the start it approved was refused, e.g. too many
    /// runs): the person's approval still stands.
    pub fn release(&self, id: &str) {
        if let Some(grant) = self.held.lock().expect("grants lock").0.get_mut(id) {
            grant.used = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: GrantKind = GrantKind::Analysis;

    #[test]
    fn a_grant_starts_one_thing_once_in_its_session_for_its_content() {
        let grants = Grants::default();
        let t0 = Instant::now();
        let id = grants.issue_at(A, "s1", "plan-1", None, t0);
        assert!(id.starts_with("val-") && id.len() == 36, "{id}");
        // Asking again while it is unused gives the same id.
        assert_eq!(grants.issue_at(A, "s1", "plan-1", None, t0), id);
        // Another session, kind or content gets its own.
        assert_ne!(grants.issue_at(A, "s2", "plan-1", None, t0), id);
        assert_ne!(grants.issue_at(A, "s1", "plan-2", None, t0), id);
        let other_kind = grants.issue_at(GrantKind::Campaign, "s1", "plan-1", None, t0);
        assert!(other_kind.starts_with("prev-"), "{other_kind}");

        assert_eq!(
            grants.take_at(A, &id, "s2", "plan-1", t0),
            Err(Refusal::OtherSession)
        );
        assert!(matches!(
            grants.take_at(A, &id, "s1", "plan-2", t0),
            Err(Refusal::OtherContent { .. })
        ));
        assert_eq!(
            grants.take_at(GrantKind::Campaign, &id, "s1", "plan-1", t0),
            Err(Refusal::OtherKind)
        );
        assert_eq!(
            grants.take_at(
                A,
                "val-00000000000000000000000000000000",
                "s1",
                "plan-1",
                t0
            ),
            Err(Refusal::Unknown)
        );
        assert_eq!(grants.take_at(A, &id, "s1", "plan-1", t0), Ok(()));
        // Replayed: refused, and a new validation gets a new id.
        assert_eq!(
            grants.take_at(A, &id, "s1", "plan-1", t0),
            Err(Refusal::Used)
        );
        assert_eq!(
            grants.check_at(A, &id, "s1", "plan-1", t0),
            Err(Refusal::Used)
        );
        assert_ne!(grants.issue_at(A, "s1", "plan-1", None, t0), id);
        // A start refused after the take gives the approval back.
        grants.release(&id);
        assert_eq!(grants.take_at(A, &id, "s1", "plan-1", t0), Ok(()));
    }

    #[test]
    fn a_grant_expires() {
        let grants = Grants::default();
        let t0 = Instant::now();
        let id = grants.issue_at(A, "s1", "plan-1", None, t0);
        let late = t0 + GRANT_TTL;
        assert_eq!(
            grants.check_at(A, &id, "s1", "plan-1", late),
            Err(Refusal::Expired)
        );
        assert_eq!(
            grants.take_at(A, &id, "s1", "plan-1", late),
            Err(Refusal::Expired)
        );
        // An expired grant is not handed out again.
        assert_ne!(grants.issue_at(A, "s1", "plan-1", None, late), id);
        assert_eq!(
            grants.take_at(A, &id, "s1", "plan-1", t0 + GRANT_TTL / 2),
            Ok(())
        );
    }

    #[test]
    fn the_store_is_bounded() {
        let grants = Grants::default();
        let t0 = Instant::now();
        let first = grants.issue_at(A, "s", "c-0", None, t0);
        for i in 1..=MAX_GRANTS {
            grants.issue_at(A, "s", &format!("c-{i}"), None, t0);
        }
        assert_eq!(grants.held.lock().unwrap().0.len(), MAX_GRANTS);
        assert_eq!(
            grants.check_at(A, &first, "s", "c-0", t0),
            Err(Refusal::Unknown)
        );
    }
}
