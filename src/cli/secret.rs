//! `ingestbench secret set|list|rm`: the per-user token store. `set` reads the token from
//! stdin (without echo on a terminal); `list` prints names only. No command ever prints a token.

use argh::FromArgs;
use std::io::{IsTerminal, Read};
use std::path::PathBuf;

use crate::config::secrets::{self, Store, Token};
use crate::exit::Exit;

#[derive(FromArgs)]
/// Store, list and remove tokens that configs name with target.auth.token_secret.
#[argh(
    subcommand,
    name = "secret",
    help_triggers("-h", "--help", "help"),
    example = "printf %s \"$HEC_TOKEN\" | ingestbench secret set hec-prod",
    example = "ingestbench secret list",
    example = "ingestbench secret rm hec-prod",
    note = "The store is a 0700 directory with one 0600 file per secret: --dir, else $INGESTBENCH_SECRETS_DIR, else $XDG_CONFIG_HOME/ingestbench/secrets, else ~/.config/ingestbench/secrets."
)]
pub struct Args {
    #[argh(subcommand)]
    cmd: Cmd,
}

#[derive(FromArgs)]
#[argh(subcommand)]
enum Cmd {
    Set(SetArgs),
    List(ListArgs),
    Rm(RmArgs),
}

#[derive(FromArgs)]
/// Store a token read from stdin (no echo on a terminal) under NAME, replacing any earlier one.
#[argh(
    subcommand,
    name = "set",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench secret set hec-prod < token.txt"
)]
struct SetArgs {
    /// the secret's name (A-Z a-z 0-9 _ . -)
    #[argh(positional)]
    name: String,
    /// store directory (default: the per-user store)
    #[argh(option)]
    dir: Option<PathBuf>,
}

#[derive(FromArgs)]
/// List the names of stored secrets (never their values).
#[argh(
    subcommand,
    name = "list",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench secret list"
)]
struct ListArgs {
    /// store directory (default: the per-user store)
    #[argh(option)]
    dir: Option<PathBuf>,
}

#[derive(FromArgs)]
/// Remove the secret NAME.
#[argh(
    subcommand,
    name = "rm",
    help_triggers("-h", "--help", "help"),
    example = "ingestbench secret rm hec-prod"
)]
struct RmArgs {
    /// the secret's name
    #[argh(positional)]
    name: String,
    /// store directory (default: the per-user store)
    #[argh(option)]
    dir: Option<PathBuf>,
}

/// Longest token accepted on stdin.
const MAX_TOKEN_BYTES: u64 = 64 * 1024;

fn store(dir: Option<PathBuf>) -> Result<Store, String> {
    dir.map(Ok)
        .unwrap_or_else(secrets::default_dir)
        .map(Store::new)
}

pub fn run(a: Args) -> Exit {
    let result = match a.cmd {
        Cmd::Set(s) => set(s),
        Cmd::List(l) => store(l.dir).and_then(|st| st.list()).map(|names| {
            for n in names {
                super::out(&n);
            }
        }),
        Cmd::Rm(r) => store(r.dir).and_then(|st| match st.remove(&r.name)? {
            true => {
                super::err(&format!("removed secret {:?}", r.name));
                Ok(())
            }
            false => Err(format!(
                "no secret named {:?} in {}",
                r.name,
                st.dir().display()
            )),
        }),
    };
    match result {
        Ok(()) => Exit::Ok,
        Err(e) => {
            super::err(&format!("error: {e}"));
            Exit::Invalid
        }
    }
}

fn set(s: SetArgs) -> Result<(), String> {
    secrets::check_name(&s.name)?;
    let st = store(s.dir)?;
    let token = read_token(&s.name)?;
    st.set(&s.name, &token)?;
    super::err(&format!(
        "stored secret {:?} in {}",
        s.name,
        st.dir().display()
    ));
    Ok(())
}

fn read_token(name: &str) -> Result<Token, String> {
    let stdin = std::io::stdin();
    let text = if stdin.is_terminal() {
        rpassword::prompt_password(format!("token for {name} (input hidden): "))
            .map_err(|e| format!("cannot read the token from the terminal: {e}"))?
    } else {
        let mut buf = String::new();
        stdin
            .lock()
            .take(MAX_TOKEN_BYTES + 1)
            .read_to_string(&mut buf)
            .map_err(|e| format!("cannot read the token from stdin: {e}"))?;
        if buf.len() as u64 > MAX_TOKEN_BYTES {
            return Err(format!(
                "the token on stdin is longer than {MAX_TOKEN_BYTES} bytes"
            ));
        }
        buf
    };
    let t = text.trim_end_matches(['\r', '\n']);
    if t.is_empty() {
        return Err("no token on stdin; nothing stored".into());
    }
    if t.contains(['\n', '\r']) {
        return Err("the token spans several lines; a token is one line".into());
    }
    Ok(Token::new(t.to_string()))
}
