//! What an HTTP answer says about the events it answers, in each protocol's own words: the
//! one classification the run (`Framer::outcome`) and `probe` share, so the two never
//! disagree. "Accepted" is the collector's yes in its protocol's terms: an HEC `code` 0, a
//! `_bulk` item's 2xx status, a 2xx of a collector that has no words beyond its status (lphc,
//! plain `http` with its expected statuses). A 2xx that does not say yes in those terms (an
//! HEC body with no `code`, a body that is not JSON, a content coding the engine did not
//! ask for, a `_bulk` 2xx that is no `_bulk` answer) is `Unreadable`: the collector may have
//! stored the events, so they are never resent, and they are counted apart, failing the run
//! (docs/report.md, "What counts as accepted"). No allocation: bodies are scanned, not
//! parsed into a tree.

use crate::adapter::Body;
use crate::adapter::bulk;

/// What an answer means for its batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judged {
    /// The collector said yes in its protocol's words.
    Accepted,
    /// Send the same bytes again under the retry limits (429/503, HEC 8 and 9, `_bulk`
    /// 429/502/503/504).
    Retry,
    /// The credentials were refused (401/403, HEC token codes): the run stops (exit 4).
    AuthFailed,
    /// Refused for good (any other refusal, any other HEC code).
    Failed,
    /// A `_bulk` answer: each item says what became of its event.
    Items,
    /// Answered 2xx, but not in words the engine can read: never resent, counted apart.
    Unreadable,
}

/// HEC codes about the token: disabled, required, invalid authorization, invalid (1–4, 21,
/// 22).
pub const HEC_AUTH_CODES: [i64; 6] = [1, 2, 3, 4, 21, 22];
/// HEC codes worth sending again: 8 internal error, 9 server busy.
pub const HEC_RETRY_CODES: [i64; 2] = [8, 9];

/// How an answer to a request of `body` kind reads: `expect` is plain HTTP's list of
/// success statuses (empty: any 2xx); `encoded` says the answer carried a content coding.
/// Returns the verdict and, for HEC, the answer's `code`.
pub fn judge(
    body_kind: Body,
    expect: Option<&[u16]>,
    status: u16,
    body: &[u8],
    encoded: bool,
) -> (Judged, Option<i64>) {
    if let Some(expect) = expect {
        return (plain(expect, status), None);
    }
    match body_kind {
        Body::HecEnvelopes | Body::HecLines => {
            let code = if encoded { None } else { hec_code(body) };
            (hec(status, code), code)
        }
        Body::Bulk => (bulk_answer(status, body, encoded), None),
        Body::JsonArray | Body::Plain => (lphc(status), None),
    }
}

/// HEC: the status and the body's `code` (`None`: no integer `code` could be read).
pub fn hec(status: u16, code: Option<i64>) -> Judged {
    if matches!(status, 401 | 403) || code.is_some_and(|c| HEC_AUTH_CODES.contains(&c)) {
        return Judged::AuthFailed;
    }
    if matches!(status, 429 | 503) || code.is_some_and(|c| HEC_RETRY_CODES.contains(&c)) {
        return Judged::Retry;
    }
    match (status, code) {
        (200..=299, Some(0)) => Judged::Accepted,
        (200..=299, None) => Judged::Unreadable,
        _ => Judged::Failed,
    }
}

/// The top-level integer `code` of an HEC answer (`{"text":"Success","code":0}`), when the
/// body is a JSON object that has one.
pub fn hec_code(body: &[u8]) -> Option<i64> {
    let v = bulk::member(body, b"code")?;
    let (neg, digits) = match v.strip_prefix(b"-") {
        Some(d) => (true, d),
        None => (false, v),
    };
    if digits.is_empty() || digits.len() > 18 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = digits
        .iter()
        .fold(0i64, |a, d| a * 10 + i64::from(d - b'0'));
    Some(if neg { -n } else { n })
}

/// The top-level `ackId` of an HEC answer, when it is a non-negative integer.
pub fn hec_ack_id(body: &[u8]) -> Option<u64> {
    let v = bulk::member(body, b"ackId")?;
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}

/// An HEC ack poll's answer is readable when it is a 2xx whose body has an `acks` object;
/// anything else is a failed poll (the ids are asked about again).
pub fn hec_ack_poll(status: u16, body: &[u8], encoded: bool) -> bool {
    (200..300).contains(&status)
        && !encoded
        && bulk::member(body, b"acks").is_some_and(|a| a.first() == Some(&b'{'))
}

/// `_bulk`: a 2xx that is a `_bulk` answer is read item by item, whatever its `errors`
/// says (an item's status is the collector's word on its event); a 2xx that is not one is
/// unreadable.
fn bulk_answer(status: u16, body: &[u8], encoded: bool) -> Judged {
    match status {
        200..=299 if !encoded && bulk::errors(body).is_some() => Judged::Items,
        200..=299 => Judged::Unreadable,
        401 | 403 => Judged::AuthFailed,
        429 | 502 | 503 | 504 => Judged::Retry,
        _ => Judged::Failed,
    }
}

/// lphc: a collector with no words beyond its status.
fn lphc(status: u16) -> Judged {
    match status {
        200..=299 => Judged::Accepted,
        401 | 403 => Judged::AuthFailed,
        429 | 503 => Judged::Retry,
        _ => Judged::Failed,
    }
}

/// Plain HTTP (`adapter: http`): success by the expected statuses (any 2xx when none are
/// given); every other answer fails its request, nothing is retried.
fn plain(expect: &[u16], status: u16) -> Judged {
    let ok = if expect.is_empty() {
        (200..300).contains(&status)
    } else {
        expect.contains(&status)
    };
    if ok { Judged::Accepted } else { Judged::Failed }
}

/// Whether an answer of `status` that could not be read is "answered 2xx, unreadable" for a
/// request of this kind: a 2xx, or for plain HTTP one of its expected statuses.
pub fn unreadable_is_success(expect: Option<&[u16]>, status: u16) -> bool {
    match expect {
        Some(e) if !e.is_empty() => e.contains(&status),
        _ => (200..300).contains(&status),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEC: Body = Body::HecEnvelopes;

    fn hec_of(status: u16, body: &[u8]) -> Judged {
        judge(HEC, None, status, body, false).0
    }

    #[test]
    fn hec_says_yes_only_with_code_0() {
        assert_eq!(
            hec_of(200, br#"{"text":"Success","code":0}"#),
            Judged::Accepted
        );
        assert_eq!(
            hec_of(200, br#"{"text":"Success","code":0,"ackId":7}"#),
            Judged::Accepted
        );
        assert_eq!(
            hec_of(200, br#"{"text":"Invalid data format","code":6}"#),
            Judged::Failed
        );
        assert_eq!(hec_of(200, br#"{"code":9}"#), Judged::Retry);
        assert_eq!(hec_of(200, br#"{"code":8}"#), Judged::Retry);
        assert_eq!(hec_of(200, br#"{"code":18}"#), Judged::Failed);
        assert_eq!(hec_of(200, br#"{"code":4}"#), Judged::AuthFailed);
        assert_eq!(hec_of(200, br#"{"text":"Success"}"#), Judged::Unreadable);
        assert_eq!(hec_of(200, b"OK"), Judged::Unreadable);
        assert_eq!(hec_of(200, b""), Judged::Unreadable);
        assert_eq!(hec_of(204, b""), Judged::Unreadable);
        assert_eq!(hec_of(200, br#"{"code":"0"}"#), Judged::Unreadable);
        assert_eq!(hec_of(200, br#"{"code":0.5}"#), Judged::Unreadable);
        // The code is the object's own member, not a word in its text.
        assert_eq!(
            hec_of(200, br#"{"text":"code","x":0,"code":6}"#),
            Judged::Failed
        );
        assert_eq!(
            hec_of(200, br#"{"text":"\"code\":0","code":6}"#),
            Judged::Failed
        );
        assert_eq!(hec_of(200, br#"{"inner":{"code":0}}"#), Judged::Unreadable);
        // A content coding the engine did not ask for: its bytes say nothing.
        assert_eq!(
            judge(HEC, None, 200, br#"{"code":0}"#, true).0,
            Judged::Unreadable
        );
        assert_eq!(hec_of(503, br#"{"code":9}"#), Judged::Retry);
        assert_eq!(hec_of(500, br#"{"code":8}"#), Judged::Retry);
        assert_eq!(hec_of(500, b""), Judged::Failed);
        assert_eq!(hec_of(429, b""), Judged::Retry);
        assert_eq!(hec_of(400, br#"{"code":21}"#), Judged::AuthFailed);
        assert_eq!(hec_of(401, b""), Judged::AuthFailed);
        assert_eq!(hec_of(400, br#"{"code":10}"#), Judged::Failed);
        assert_eq!(hec_of(404, b""), Judged::Failed);
        assert_eq!(judge(HEC, None, 200, br#"{"code":6}"#, false).1, Some(6));
    }

    #[test]
    fn hec_ack_ids_and_polls() {
        assert_eq!(
            hec_ack_id(br#"{"text":"Success","code":0,"ackId":7}"#),
            Some(7)
        );
        assert_eq!(hec_ack_id(br#"{"code":0,"ackId":-1}"#), None);
        assert_eq!(hec_ack_id(br#"{"code":0}"#), None);
        assert!(hec_ack_poll(200, br#"{"acks":{"0":true}}"#, false));
        assert!(hec_ack_poll(200, br#"{"acks":{}}"#, false));
        assert!(!hec_ack_poll(
            200,
            br#"{"text":"ACK is disabled","code":14}"#,
            false
        ));
        assert!(!hec_ack_poll(400, br#"{"acks":{"0":true}}"#, false));
        assert!(!hec_ack_poll(200, b"OK", false));
        assert!(!hec_ack_poll(200, br#"{"acks":{"0":true}}"#, true));
    }

    #[test]
    fn bulk_items_speak_for_their_events() {
        let j = |status, body: &[u8]| judge(Body::Bulk, None, status, body, false).0;
        assert_eq!(
            j(
                200,
                br#"{"errors":false,"items":[{"create":{"status":201}}]}"#
            ),
            Judged::Items
        );
        assert_eq!(
            j(
                200,
                br#"{"errors":false,"items":[{"create":{"status":400}}]}"#
            ),
            Judged::Items
        );
        assert_eq!(j(200, br#"{"errors":true,"items":[]}"#), Judged::Items);
        assert_eq!(j(200, b"{}"), Judged::Unreadable);
        assert_eq!(j(201, b"ok"), Judged::Unreadable);
        assert_eq!(j(429, b""), Judged::Retry);
        assert_eq!(j(401, b""), Judged::AuthFailed);
        assert_eq!(j(413, b""), Judged::Failed);
    }

    #[test]
    fn lphc_and_plain_http_have_only_their_status() {
        let l = |status| judge(Body::JsonArray, None, status, b"whatever", true).0;
        assert_eq!(l(200), Judged::Accepted);
        assert_eq!(l(204), Judged::Accepted);
        assert_eq!(l(503), Judged::Retry);
        assert_eq!(l(403), Judged::AuthFailed);
        assert_eq!(l(400), Judged::Failed);
        let p = |expect: &[u16], status| judge(Body::Plain, Some(expect), status, b"", false).0;
        assert_eq!(p(&[], 200), Judged::Accepted);
        assert_eq!(p(&[], 503), Judged::Failed);
        assert_eq!(p(&[404], 404), Judged::Accepted);
        assert_eq!(p(&[404], 200), Judged::Failed);
        assert!(unreadable_is_success(Some(&[404]), 404));
        assert!(!unreadable_is_success(Some(&[404]), 200));
        assert!(unreadable_is_success(None, 204));
        assert!(!unreadable_is_success(None, 503));
    }
}
