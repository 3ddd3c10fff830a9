//! Exit codes, chosen once at the end of a command (DESIGN.md): 0 OK, 2 config or pack
//! invalid (and usage errors), 3 SLO breach, 4 auth failure, 5 verification found lost or
//! duplicated events, 6 run aborted.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Ok = 0,
    Invalid = 2,
    SloBreach = 3,
    AuthFailed = 4,
    VerifyFailed = 5,
    Aborted = 6,
}

impl Exit {
    pub fn code(self) -> i32 {
        self as i32
    }
}
