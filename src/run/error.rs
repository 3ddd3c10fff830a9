//! Why a run could not be set up, typed, and the one place a run's problems become exit
//! codes (DESIGN.md): an invalid config, pack or command-line value is 2; a target name that
//! does not resolve, a built-in sink that cannot start or a thread that cannot be made is 6.

use crate::exit::Exit;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetupError {
    /// The config, a pack or a command-line value is invalid: every problem, each naming
    /// its field or file.
    Invalid(Vec<String>),
    /// The target's host name does not resolve.
    Dns(String),
    /// The built-in sink cannot start.
    Sink(String),
    /// The run's threads or servers cannot start.
    Io(String),
}

impl SetupError {
    pub fn invalid(msg: impl Into<String>) -> SetupError {
        SetupError::Invalid(vec![msg.into()])
    }

    pub fn exit(&self) -> Exit {
        match self {
            SetupError::Invalid(_) => Exit::Invalid,
            SetupError::Dns(_) | SetupError::Sink(_) | SetupError::Io(_) => Exit::Aborted,
        }
    }

    /// One line per problem, for a person.
    pub fn messages(&self) -> Vec<String> {
        match self {
            SetupError::Invalid(m) => m.clone(),
            SetupError::Dns(m) => vec![format!("target unreachable: {m}")],
            SetupError::Sink(m) => vec![format!("cannot start the built-in sink: {m}")],
            SetupError::Io(m) => vec![m.clone()],
        }
    }
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.messages().join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_map_to_exit_codes() {
        assert_eq!(SetupError::invalid("x").exit(), Exit::Invalid);
        assert_eq!(SetupError::Dns("x".into()).exit(), Exit::Aborted);
        assert_eq!(SetupError::Sink("x".into()).exit(), Exit::Aborted);
        assert_eq!(SetupError::Io("x".into()).exit(), Exit::Aborted);
        assert!(
            SetupError::Dns("nope.invalid".into())
                .to_string()
                .contains("unreachable")
        );
    }
}
