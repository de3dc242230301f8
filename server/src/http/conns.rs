//! Connection slots: who may hold one, and for how long, before saying who they are.
//!
//! A connection starts *waiting*: it has sent no request the gate admitted yet (a request
//! with a known token, or any request on a loopback server that needs none). Waiting
//! connections are cheap to hold and cheap to make, so they get little: [`PRE_AUTH_TIMEOUT`]
//! from the accept to an admitted request (TLS handshake included), at most
//! [`WAITING_PER_PEER`] per peer address and [`WAITING`] in all. Over either bound a new
//! connection ends an older waiting one rather than being turned away — the oldest of its
//! own peer, or else of the peer that holds the most — because the newest connection is the
//! one most likely to be a live client (and a client sharing an address with an attacker
//! still gets in). Only an admitted
//! connection takes one of the [`ADMITTED`] long slots (idle keep-alive up to the header
//! timeout, streams as long as they last). Every peer address has at most [`PER_PEER`]
//! connections open; more are closed as soon as they are accepted. Connections already
//! ended for a newer one are not counted while their tasks close them (at most as many
//! again), so a live client is not refused behind them when the server is loaded.
//!
//! So connections that never finish their headers, from one address or from many, cannot
//! make a token holder wait: accepting never waits for a slot, and the token holder's
//! connection is admitted within one round trip.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// Connections one peer address may have open at once (a reverse proxy on the same computer
/// counts as one peer).
pub const PER_PEER: usize = 64;
/// Connections of one peer address that have not had a request admitted yet.
pub const WAITING_PER_PEER: usize = 8;
/// Connections of all peers that have not had a request admitted yet.
pub const WAITING: usize = 64;
/// Connections with an admitted request, served at once.
pub const ADMITTED: usize = 256;
/// How long a new connection has to complete its TLS handshake and send a request the gate
/// admits (a real client does both in a few round trips).
pub const PRE_AUTH_TIMEOUT: Duration = Duration::from_secs(3);

/// Why a new connection was closed at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// The peer has [`PER_PEER`] connections open.
    PeerFull,
}

#[derive(Debug, Default)]
struct Peer {
    open: usize,
    /// Of `open`, the connections already ended for a newer one whose task has not closed
    /// them yet. They do not count towards [`PER_PEER`] (under load the accept loop runs
    /// ahead of the tasks that close them, and a live client must not be refused for
    /// connections already on their way out), but `open` never exceeds twice the cap, so the
    /// descriptors a peer holds stay bounded.
    closing: usize,
    /// The waiting connections, oldest first, with the token that ends each.
    waiting: VecDeque<(u64, CancellationToken)>,
}

#[derive(Debug, Default)]
struct State {
    next_id: u64,
    peers: HashMap<IpAddr, Peer>,
    waiting: usize,
}

/// Every connection's slot.
#[derive(Debug)]
pub struct Conns {
    state: Mutex<State>,
    admitted: Arc<Semaphore>,
    waiting_cap: usize,
}

impl Conns {
    pub fn new() -> Arc<Conns> {
        Self::with_caps(WAITING, ADMITTED)
    }

    fn with_caps(waiting: usize, admitted: usize) -> Arc<Conns> {
        Arc::new(Conns {
            state: Mutex::new(State::default()),
            admitted: Arc::new(Semaphore::new(admitted)),
            waiting_cap: waiting,
        })
    }

    /// A just-accepted connection from `peer`: its ticket (waiting), or why it is closed.
    pub fn open(self: &Arc<Self>, peer: IpAddr) -> Result<Ticket, Refused> {
        let mut state = self.state.lock().expect("connections lock");
        let entry = state.peers.entry(peer).or_default();
        if entry.open - entry.closing >= PER_PEER || entry.open >= 2 * PER_PEER {
            return Err(Refused::PeerFull);
        }
        if entry.waiting.len() >= WAITING_PER_PEER {
            if let Some((_, evict)) = entry.waiting.pop_front() {
                evict.cancel();
                entry.closing += 1;
                state.waiting -= 1;
            }
        } else if state.waiting >= self.waiting_cap {
            // The peer holding the most waiting slots gives up its oldest.
            let busiest = state
                .peers
                .values_mut()
                .max_by_key(|p| p.waiting.len())
                .and_then(|p| {
                    let evict = p.waiting.pop_front()?;
                    p.closing += 1;
                    Some(evict)
                });
            if let Some((_, evict)) = busiest {
                evict.cancel();
                state.waiting -= 1;
            }
        }
        let id = state.next_id;
        state.next_id += 1;
        let evicted = CancellationToken::new();
        let entry = state.peers.entry(peer).or_default();
        entry.open += 1;
        entry.waiting.push_back((id, evicted.clone()));
        state.waiting += 1;
        Ok(Ticket {
            conns: Arc::clone(self),
            peer,
            id,
            evicted,
            admitted: CancellationToken::new(),
            slot: Mutex::new(None),
        })
    }

    /// Take connection `id` of `peer` off the waiting list; false when it was not on it.
    fn stop_waiting(&self, state: &mut State, peer: IpAddr, id: u64) -> bool {
        let Some(entry) = state.peers.get_mut(&peer) else {
            return false;
        };
        let Some(at) = entry.waiting.iter().position(|(i, _)| *i == id) else {
            return false;
        };
        entry.waiting.remove(at);
        state.waiting -= 1;
        true
    }
}

/// One connection's place; dropping it frees the place.
#[derive(Debug)]
pub struct Ticket {
    conns: Arc<Conns>,
    peer: IpAddr,
    id: u64,
    evicted: CancellationToken,
    admitted: CancellationToken,
    slot: Mutex<Option<OwnedSemaphorePermit>>,
}

impl Ticket {
    /// The gate admitted a request on this connection: it takes a long slot. False when none
    /// is free, or when the connection was already ended for a newer one.
    pub fn admit(&self) -> bool {
        let mut slot = self.slot.lock().expect("slot lock");
        if slot.is_some() {
            return true;
        }
        {
            let mut state = self.conns.state.lock().expect("connections lock");
            if !self.conns.stop_waiting(&mut state, self.peer, self.id) {
                return false;
            }
        }
        match Arc::clone(&self.conns.admitted).try_acquire_owned() {
            Ok(permit) => {
                *slot = Some(permit);
                self.admitted.cancel();
                true
            }
            Err(_) => false,
        }
    }

    /// Cancelled when the connection has an admitted request.
    pub fn admitted(&self) -> &CancellationToken {
        &self.admitted
    }

    /// Cancelled when a newer connection took this one's waiting slot.
    pub fn evicted(&self) -> &CancellationToken {
        &self.evicted
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut state = self.conns.state.lock().expect("connections lock");
        self.conns.stop_waiting(&mut state, self.peer, self.id);
        if let Some(entry) = state.peers.get_mut(&self.peer) {
            entry.open -= 1;
            if self.evicted.is_cancelled() {
                entry.closing -= 1;
            }
            if entry.open == 0 {
                state.peers.remove(&self.peer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[test]
    fn connections_ended_for_newer_ones_do_not_hold_the_peer_cap() {
        // 100 connections that never send a request, the ended ones' tasks not run yet (the
        // accept loop ahead of them under load): a live client still gets a ticket.
        let conns = Conns::new();
        let held: Vec<Ticket> = (0..100).map(|_| conns.open(ip(2)).unwrap()).collect();
        let live = conns.open(ip(2)).expect("a live client is not refused");
        assert!(live.admit());
        drop((held, live));
        // 300 of them: the peer's open connections stay bounded all the same.
        let mut slow = Vec::new();
        let mut refused = 0;
        for _ in 0..300 {
            match conns.open(ip(2)) {
                Ok(t) => slow.push(t),
                Err(Refused::PeerFull) => refused += 1,
            }
        }
        assert!(refused > 0, "the peer's open connections were not bounded");
        assert!(conns.state.lock().unwrap().peers[&ip(2)].open <= 2 * PER_PEER);
        // The tasks of the ended ones run: their places are freed.
        slow.retain(|t| !t.evicted().is_cancelled());
        assert_eq!(slow.len(), WAITING_PER_PEER);
        let live = conns.open(ip(2)).expect("a live client is not refused");
        assert!(live.admit());
        drop(slow);
        drop(live);
        assert!(conns.state.lock().unwrap().peers.is_empty());
    }

    #[test]
    fn one_peer_gets_few_waiting_slots_and_bounded_connections() {
        let conns = Conns::new();
        let mut waiting: Vec<Ticket> = (0..WAITING_PER_PEER)
            .map(|_| conns.open(ip(2)).unwrap())
            .collect();
        // One more ends the peer's oldest waiting connection.
        waiting.push(conns.open(ip(2)).unwrap());
        assert!(waiting[0].evicted().is_cancelled());
        assert!(waiting[1..].iter().all(|t| !t.evicted().is_cancelled()));
        assert!(!waiting.remove(0).admit());
        assert_eq!(conns.state.lock().unwrap().waiting, WAITING_PER_PEER);
        // Another peer is not affected.
        let other = conns.open(ip(1)).unwrap();
        assert!(other.admit());
        assert!(other.admitted().is_cancelled());
        // Admitted connections free their waiting slot but count towards the peer's cap.
        let mut admitted = Vec::new();
        for t in waiting {
            assert!(t.admit());
            admitted.push(t);
        }
        while admitted.len() < PER_PEER {
            let t = conns.open(ip(2)).unwrap();
            assert!(t.admit());
            admitted.push(t);
        }
        assert_eq!(conns.open(ip(2)).unwrap_err(), Refused::PeerFull);
        admitted.pop();
        drop(conns.open(ip(2)).unwrap());
        drop(admitted);
        drop(other);
        assert!(conns.state.lock().unwrap().peers.is_empty());
        assert_eq!(conns.state.lock().unwrap().waiting, 0);
    }

    #[test]
    fn a_full_waiting_list_ends_the_busiest_peers_oldest() {
        let conns = Conns::with_caps(4, 2);
        let a: Vec<Ticket> = (0..3).map(|_| conns.open(ip(2)).unwrap()).collect();
        let b = conns.open(ip(3)).unwrap();
        // Full: the next one, from anyone, ends ip(2)'s oldest.
        let c = conns.open(ip(4)).unwrap();
        assert!(a[0].evicted().is_cancelled());
        assert!(!a[1].evicted().is_cancelled() && !b.evicted().is_cancelled());
        // An evicted connection cannot be admitted any more.
        assert!(!a[0].admit());
        // Two long slots: the third admitted connection is refused one.
        assert!(b.admit() && c.admit());
        assert!(!a[1].admit());
        drop(b);
        assert!(a[2].admit());
    }
}
