//! Facts that several fields of one event state must agree, in every event of every pack: a
//! user agent and its parsed browser/OS, an IP and its geo/ASN, an image path and its name, an
//! event id and its category/action/outcome, a host name and its address, a user and their
//! SID/UPN/uid. Each pack renders a large sample (fixed seed, via the library as
//! `tests/packs.rs` does), each event is parsed in its own format into fields by path, and the
//! pack's rules — a table of (key path, dependent path, relation) — are checked over the whole
//! sample. Most rules are functional dependencies (each key value has exactly one dependent
//! value in the sample); the rest are semantic (the UA names the browser; a name is its path's
//! basename). A rule that never applies fails too, so a mistyped path cannot pass quietly.
//! Last, the same seed must not give two packs a shared random id (UUID or long hex id).
//!
//! Paths: JSON objects join keys with `.`, arrays use the index (`host.ip.0`), and an array of
//! `{"Name": …, "Value": …}` objects is also keyed by name (`ExtendedProperties.UserAgent`).
//! CEF: `cef.0`…`cef.6` for the header, extension keys as they are, `cs.<Label>` for a custom
//! string and its label. Syslog headers: `syslog.pri`, `syslog.host`, `syslog.app`. A key of
//! the form `a + b` is the pair of both values.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use ingestbench::generate::time::parse_rfc3339;
use ingestbench::generate::{EventCtx, Generator};
use ingestbench::pack::compile::CompiledPack;
use ingestbench::pack::entities::{Entities, EntityKind, Sizes};
use ingestbench::pack::{self, Catalog};

/// Events rendered per pack.
const SAMPLE: u64 = 20_000;
const SEED: u64 = 20_260_105;
/// Violations quoted in a failure message, per rule.
const EXAMPLES: usize = 3;

// ---------------------------------------------------------------------------------------------
// Rules as data
// ---------------------------------------------------------------------------------------------

/// How a dependent value must relate to its key value.
#[derive(Clone, Copy)]
enum Rel {
    /// Each key value has one dependent value in the whole sample.
    Fd,
    /// The two values are equal in each event.
    Same,
    /// The dependent is the key's last path component (`\` or `/` separated).
    Basename,
    /// The dependent is the program the key (a command line) runs: its first word's basename,
    /// ignoring case (`C:\Windows\Explorer.EXE` runs `explorer.exe`).
    Runs,
    /// The dependent (a parsed browser name) is the browser the key (a user agent) names.
    Browser,
    /// The dependent (a parsed OS or platform) is the OS the key (a user agent) names.
    Os,
    /// The dependent value contains the key value.
    Contains,
    /// Where the key has one of these values, the dependent is the one listed with it (a key
    /// listed twice may have either).
    Maps(&'static [(&'static str, &'static str)]),
    /// Where the key has one of these values, the dependent contains the text listed with it.
    Says(&'static [(&'static str, &'static str)]),
    /// The dependent is the key (a decimal number) in `0x…` hex.
    Hex,
}

/// A condition on another field for a rule to apply to an event.
#[derive(Clone, Copy)]
enum Cond {
    Is(&'static str, &'static str),
    IsNot(&'static str, &'static str),
    StartsWith(&'static str, &'static str),
}

#[derive(Clone, Copy)]
struct Rule {
    key: &'static str,
    dep: &'static str,
    rel: Rel,
    when: &'static [Cond],
}

const fn rule(key: &'static str, dep: &'static str, rel: Rel) -> Rule {
    Rule {
        key,
        dep,
        rel,
        when: &[],
    }
}

const fn fd(key: &'static str, dep: &'static str) -> Rule {
    rule(key, dep, Fd)
}

const fn same(key: &'static str, dep: &'static str) -> Rule {
    rule(key, dep, Same)
}

impl Rule {
    const fn when(self, when: &'static [Cond]) -> Rule {
        Rule { when, ..self }
    }
}

use Cond::{Is, IsNot, StartsWith};
use Rel::{Basename, Browser, Contains, Fd, Hex, Maps, Os, Runs, Same, Says};

/// A pack, how one of its events becomes fields, and what must hold.
struct PackRules {
    id: &'static str,
    parse: fn(&str) -> Result<Fields, String>,
    rules: &'static [Rule],
}

#[rustfmt::skip]
const PACKS: &[PackRules] = &[
    PackRules { id: "aws.cloudtrail", parse: parse_json, rules: CLOUDTRAIL },
    PackRules { id: "aws.guardduty", parse: parse_json, rules: GUARDDUTY },
    PackRules { id: "crowdstrike.falcon", parse: parse_json, rules: FALCON },
    PackRules { id: "firewall.cef", parse: parse_cef, rules: CEF },
    PackRules { id: "firewall.cef.syslog", parse: parse_cef_syslog, rules: CEF_SYSLOG },
    PackRules { id: "firewall.traffic", parse: parse_json, rules: FIREWALL_ECS },
    PackRules { id: "identity.okta", parse: parse_json, rules: OKTA },
    PackRules { id: "linux.auditd", parse: parse_auditd, rules: AUDITD },
    PackRules { id: "linux.syslog", parse: parse_linux_syslog, rules: LINUX_SYSLOG },
    PackRules { id: "m365.audit", parse: parse_json, rules: M365 },
    PackRules { id: "paloalto.traffic", parse: parse_panos, rules: PANOS },
    PackRules { id: "windows.security", parse: parse_json, rules: WINDOWS },
];

/// Paths under a long common prefix.
macro_rules! issuer {
    ($p:literal) => {
        concat!("userIdentity.sessionContext.sessionIssuer.", $p)
    };
}
macro_rules! instance {
    ($p:literal) => {
        concat!("detail.resource.instanceDetails.", $p)
    };
}
macro_rules! remote {
    ($p:literal) => {
        concat!(
            "detail.service.action.networkConnectionAction.remoteIpDetails.",
            $p
        )
    };
}

#[rustfmt::skip]
const CLOUDTRAIL: &[Rule] = &[
    fd("eventName", "eventSource"),
    rule("eventName", "eventSource", Maps(&[
        ("ConsoleLogin", "signin.amazonaws.com"),
        ("GetObject", "s3.amazonaws.com"),
        ("Decrypt", "kms.amazonaws.com"),
        ("DescribeInstances", "ec2.amazonaws.com"),
        ("GetCallerIdentity", "sts.amazonaws.com"),
    ])),
    fd("eventName", "eventType"),
    rule("eventName", "eventType", Maps(&[("ConsoleLogin", "AwsConsoleSignIn"), ("Decrypt", "AwsApiCall")])),
    fd("eventName", "eventCategory"),
    fd("eventName", "managementEvent"),
    fd("eventName", "readOnly"),
    rule("responseElements.ConsoleLogin", "eventName",
        Maps(&[("Success", "ConsoleLogin"), ("Failure", "ConsoleLogin")])),
    same("userIdentity.accountId", "recipientAccountId"),
    fd("userIdentity.userName", "userIdentity.principalId"),
    rule("userIdentity.userName", "userIdentity.arn", Contains),
    fd(issuer!("userName"), issuer!("principalId")),
    fd(issuer!("principalId"), issuer!("userName")),
    rule(issuer!("principalId"), "userIdentity.principalId", Contains),
    rule(issuer!("userName"), "userIdentity.arn", Contains),
    rule("requestParameters.bucketName", "requestParameters.Host", Contains),
    // Global services (sign-in, IAM) have one endpoint whatever the region.
    rule("awsRegion", "tlsDetails.clientProvidedHostHeader", Contains)
        .when(&[IsNot("eventSource", "signin.amazonaws.com"), IsNot("eventSource", "iam.amazonaws.com")]),
    // Not asserted: one role session's accessKeyId and creationDate are drawn per event (the
    // pack has no session entity), so principal → accessKeyId does not hold.
];

#[rustfmt::skip]
const GUARDDUTY: &[Rule] = &[
    rule("detail.type", "detail.title", Says(&[
        ("UnauthorizedAccess:EC2/SSHBruteForce", "is performing SSH brute force attacks against"),
        ("Recon:EC2/Portscan", "is performing outbound port scans"),
        ("Trojan:EC2/DNSDataExfiltration", "Data exfiltration through DNS queries"),
    ])),
    rule("detail.type", "detail.service.action.actionType", Maps(&[
        ("UnauthorizedAccess:EC2/SSHBruteForce", "NETWORK_CONNECTION"),
        ("Recon:EC2/Portscan", "NETWORK_CONNECTION"),
        ("Trojan:EC2/DNSDataExfiltration", "DNS_REQUEST"),
    ])),
    fd("detail.type + detail.service.resourceRole", "detail.severity"),
    rule("detail.service.resourceRole", "detail.service.action.networkConnectionAction.connectionDirection",
        Maps(&[("TARGET", "INBOUND"), ("ACTOR", "OUTBOUND")])),
    same("account", "detail.accountId"),
    same("region", "detail.region"),
    rule("detail.id", "detail.arn", Contains),
    rule("detail.service.detectorId", "detail.arn", Contains),
    rule(instance!("instanceId"), "detail.title", Contains),
    rule(remote!("ipAddressV4"), "detail.title", Contains),
    fd(instance!("instanceId"), "detail.accountId"),
    fd(instance!("instanceId"), "detail.region"),
    fd(instance!("instanceId"), instance!("availabilityZone")),
    fd(instance!("instanceId"), instance!("networkInterfaces.0.privateIpAddress")),
    fd(instance!("instanceId"), instance!("networkInterfaces.0.publicIp")),
    fd(instance!("instanceId"), instance!("tags.0.value")),
    fd(instance!("networkInterfaces.0.privateIpAddress"), instance!("networkInterfaces.0.privateDnsName")),
    fd(remote!("ipAddressV4"), remote!("country.countryName")),
    fd(remote!("ipAddressV4"), remote!("city.cityName")),
    fd(remote!("ipAddressV4"), remote!("organization.asn")),
    fd(remote!("ipAddressV4"), remote!("organization.asnOrg")),
    fd(remote!("ipAddressV4"), remote!("geoLocation.lat")),
    fd(remote!("ipAddressV4"), remote!("geoLocation.lon")),
];

#[rustfmt::skip]
const FALCON: &[Rule] = &[
    fd("event_simpleName", "name"),
    fd("aid", "LocalAddressIP4"),
    fd("LocalAddressIP4", "aid"),
    fd("aid", "aip"),
    fd("ImageFileName", "SHA256HashData"),
    fd("ImageFileName", "MD5HashData"),
    fd("event.SensorId", "event.ComputerName"),
    fd("event.ComputerName", "event.LocalIP"),
    fd("event.ComputerName", "event.MACAddress"),
    rule("event.SensorId", "event.DetectId", Contains),
    rule("event.SensorId", "event.FalconHostLink", Contains),
    fd("event.DetectName", "event.Tactic"),
    fd("event.DetectName", "event.Severity"),
    rule("event.Severity", "event.SeverityName", Maps(&[
        ("1", "Informational"), ("2", "Low"), ("3", "Medium"), ("4", "High"), ("5", "Critical"),
    ])),
    fd("event.PatternDispositionValue", "event.PatternDispositionDescription"),
    same("event.SHA256String", "event.IOCValue"),
    same("event.Tactic", "event.MitreAttack.0.Tactic"),
    same("event.Technique", "event.MitreAttack.0.Technique"),
    same("event.PatternId", "event.MitreAttack.0.PatternID"),
    rule("event.CommandLine", "event.FileName", Runs),
];

/// What both CEF packs state the same way, and what one of them adds.
macro_rules! cef_rules {
    ($($extra:expr),* $(,)?) => {
        &[
            rule("cef.4", "act", Maps(&[
                ("traffic-allow", "allow"), ("traffic-deny", "deny"), ("traffic-drop", "drop"),
            ])),
            fd("cef.4", "cef.5"),
            fd("cef.4", "cef.6"),
            rule("act", "outcome", Maps(&[("allow", "success"), ("deny", "failure"), ("drop", "failure")])),
            rule("deviceDirection", "cs.SourceZone", Maps(&[("1", "trust"), ("0", "untrust")])),
            fd("deviceExternalId", "dvchost"),
            fd("dvchost", "dvc"),
            fd("src", "shost"),
            fd("shost", "src"),
            fd("dst", "dhost"),
            fd("dhost", "dst"),
            fd("dst", "cs.DestinationCountry"),
            fd("src", "cs.SourceCountry"),
            fd("dpt + proto", "app"),
            // Not asserted: sourceTranslatedAddress comes from a two-address NAT pool per
            // session, so a client has more than one.
            $($extra),*
        ]
    };
}

#[rustfmt::skip]
const CEF: &[Rule] = cef_rules!();

#[rustfmt::skip]
const CEF_SYSLOG: &[Rule] = cef_rules!(
    same("syslog.host", "dvchost"),
    rule("cef.4", "syslog.pri", Maps(&[
        ("traffic-allow", "134"), ("traffic-deny", "132"), ("traffic-drop", "132"),
    ])),
);

#[rustfmt::skip]
const FIREWALL_ECS: &[Rule] = &[
    rule("event.action", "event.outcome", Maps(&[("allow", "success"), ("deny", "failure"), ("drop", "failure")])),
    rule("event.action", "event.type.1", Maps(&[("allow", "end"), ("deny", "denied"), ("drop", "denied")])),
    rule("network.transport", "network.iana_number", Maps(&[("tcp", "6"), ("udp", "17")])),
    rule("network.direction", "observer.ingress.zone", Maps(&[
        ("outbound", "trust"), ("internal", "trust"), ("inbound", "untrust"),
    ])),
    fd("rule.name", "rule.id"),
    fd("rule.id", "rule.name"),
    fd("observer.name", "observer.serial_number"),
    fd("host.name", "source.ip"),
    fd("source.ip", "host.name"),
    fd("destination.domain", "destination.ip"),
    fd("destination.ip", "destination.geo.country_iso_code"),
    fd("destination.ip", "destination.geo.country_name"),
    fd("destination.geo.country_iso_code", "destination.geo.country_name"),
    fd("source.ip", "source.geo.country_iso_code"),
    fd("source.ip", "source.geo.country_name"),
    fd("source.ip", "source.as.number"),
    fd("source.ip", "source.as.organization.name"),
];

#[rustfmt::skip]
const OKTA: &[Rule] = &[
    rule("client.userAgent.rawUserAgent", "client.userAgent.browser", Browser),
    rule("client.userAgent.rawUserAgent", "client.userAgent.os", Os),
    fd("client.userAgent.rawUserAgent", "client.device"),
    fd("eventType", "displayMessage"),
    rule("eventType + outcome.result", "legacyEventType", Maps(&[
        ("user.session.start + SUCCESS", "core.user_auth.login_success"),
        ("user.session.start + FAILURE", "core.user_auth.login_failed"),
        ("user.authentication.auth_via_mfa + SUCCESS", "core.user.factor.attempt_success"),
        ("user.authentication.auth_via_mfa + FAILURE", "core.user.factor.attempt_fail"),
        ("user.authentication.sso + SUCCESS", "app.auth.sso"),
    ])),
    rule("outcome.result", "severity", Maps(&[("SUCCESS", "INFO"), ("FAILURE", "WARN")])),
    fd("actor.alternateId", "actor.id"),
    fd("actor.id", "actor.alternateId"),
    fd("actor.alternateId", "actor.displayName"),
    same("actor.id", "target.0.id").when(&[Is("target.0.type", "User")]),
    fd("target.0.id", "target.0.displayName").when(&[Is("target.0.type", "AppInstance")]),
    rule("transaction.id", "debugContext.debugData.requestId", Contains),
    same("client.ipAddress", "request.ipChain.0.ip"),
    fd("client.ipAddress", "client.geographicalContext.city"),
    fd("client.ipAddress", "client.geographicalContext.country"),
    fd("client.ipAddress", "client.geographicalContext.geolocation.lat"),
    fd("client.ipAddress", "client.geographicalContext.geolocation.lon"),
    fd("client.ipAddress", "securityContext.asNumber"),
    fd("client.ipAddress", "securityContext.asOrg"),
    fd("request.ipChain.0.ip", "request.ipChain.0.geographicalContext.city"),
    fd("request.ipChain.0.ip", "request.ipChain.0.geographicalContext.country"),
    // Known, not asserted: an SSO's AppUser id (target.1.id) should be fixed per (user, app),
    // but no slot kind is keyed by two entities, so it is drawn per event; the session and
    // transaction ids of one sign-in chain are per event too (no session model).
];

#[rustfmt::skip]
const AUDITD: &[Rule] = &[
    fd("SYSCALL.auid", "SYSCALL.AUID"),
    fd("SYSCALL.uid", "SYSCALL.UID"),
    fd("SYSCALL.gid", "SYSCALL.GID"),
    fd("SYSCALL.euid", "SYSCALL.EUID"),
    // Run through a symlink (`/bin/sh` → dash), PATH names what was run and exe the binary.
    same("SYSCALL.exe", "PATH.0.name").when(&[IsNot("PATH.0.name", "/bin/sh")]),
    same("EXECVE.ARGV.0", "PROCTITLE.ARGV.0"),
    same("EXECVE.ARGV.1", "PROCTITLE.ARGV.1"),
    same("EXECVE.ARGV.2", "PROCTITLE.ARGV.2"),
    fd("SYSCALL.PPID.exe", "SYSCALL.PPID.comm"),
    rule("CWD.cwd", "SYSCALL.AUID", Basename).when(&[StartsWith("CWD.cwd", "/home/")]),
    fd("USER_AUTH.0.auid", "USER_AUTH.0.AUID"),
    fd("USER_LOGIN.0.auid", "USER_LOGIN.0.AUID"),
    fd("USER_LOGIN.0.msg.id", "USER_LOGIN.0.AUID"),
    same("USER_AUTH.0.msg.hostname", "USER_AUTH.0.msg.addr"),
    same("USER_LOGIN.0.msg.hostname", "USER_LOGIN.0.msg.addr"),
    // Not asserted: `comm` is the task name, not always the executable's basename
    // (python3 → python3.11, vim → vim.basic, sh → dash, a script's name under python3).
];

#[rustfmt::skip]
const LINUX_SYSLOG: &[Rule] = &[
    fd("pam.user", "pam.uid"),
    fd("pam.by", "pam.by_uid"),
    rule("sudo.PWD", "sudo.user", Basename),
    // Known, not asserted: a host's sshd facility (PRI 38 on Debian, 86 on RHEL) and its
    // sshd / sshd-session name are drawn per event, and Windows hosts send sshd lines too:
    // both need per-host OS facts and per-event host roles, which the entity pools lack.
];

#[rustfmt::skip]
const M365: &[Rule] = &[
    rule("ExtendedProperties.UserAgent", "DeviceProperties.BrowserType", Browser),
    rule("ExtendedProperties.UserAgent", "DeviceProperties.OS", Os),
    rule("UserAgent", "BrowserName", Browser),
    rule("UserAgent", "Platform", Os),
    fd("Operation", "RecordType"),
    fd("Operation", "Workload"),
    rule("Operation", "ResultStatus", Maps(&[("UserLoggedIn", "Success"), ("UserLoginFailed", "Failed")])),
    fd("ErrorNumber", "LogonError"),
    // SharePoint writes the PUID as a claims string (`i:0h.f|membership|…@live.com`).
    fd("UserId", "UserKey").when(&[IsNot("Workload", "SharePoint")]),
    fd("UserId", "Actor.0.ID"),
    fd("UserId", "MailboxGuid"),
    fd("UserId", "LogonUserSid"),
    same("LogonUserSid", "MailboxOwnerSid"),
    same("UserId", "MailboxOwnerUPN"),
    same("ClientIP", "ActorIpAddress"),
    same("ClientIP", "ClientIPAddress"),
    same("ObjectId", "Target.0.ID"),
    rule("SiteUrl", "ObjectId", Contains),
    rule("SourceFileName", "ObjectId", Contains),
    rule("SourceFileExtension", "SourceFileName", Contains),
    fd("Site", "SiteUrl"),
];

#[rustfmt::skip]
const PANOS: &[Rule] = &[
    fd("serial", "device_name"),
    same("syslog.host", "device_name"),
    rule("subtype", "action", Maps(&[
        ("end", "allow"), ("start", "allow"), ("drop", "drop"), ("deny", "deny"), ("deny", "reset-both"),
    ])),
    rule("subtype", "session_end_reason", Maps(&[
        ("deny", "policy-deny"), ("drop", "policy-deny"), ("start", "n/a"),
    ])),
    fd("rule", "rule_uuid"),
    fd("rule_uuid", "rule"),
    fd("app", "subcategory"),
    fd("app", "category"),
    fd("app", "technology"),
    fd("app", "risk"),
    fd("app", "characteristics"),
    fd("src", "src_location"),
    fd("dst", "dst_location"),
    // Not asserted: the NAT source address comes from a two-address pool per session.
];

#[rustfmt::skip]
const WINDOWS: &[Rule] = &[
    same("event.code", "winlog.event_id"),
    rule("event.code", "event.category.0", Maps(&[
        ("4624", "authentication"), ("4625", "authentication"), ("4688", "process"),
    ])),
    rule("event.code", "event.action", Maps(&[
        ("4624", "logged-in"), ("4625", "logon-failed"), ("4688", "created-process"),
    ])),
    rule("event.code", "event.outcome", Maps(&[("4624", "success"), ("4625", "failure"), ("4688", "success")])),
    rule("event.code", "winlog.keywords.0", Maps(&[
        ("4624", "Audit Success"), ("4625", "Audit Failure"), ("4688", "Audit Success"),
    ])),
    rule("event.code", "winlog.task", Maps(&[("4624", "Logon"), ("4625", "Logon"), ("4688", "Process Creation")])),
    rule("winlog.event_data.LogonType", "winlog.logon.type", Maps(&[
        ("2", "Interactive"), ("3", "Network"), ("4", "Batch"), ("5", "Service"), ("7", "Unlock"),
        ("10", "RemoteInteractive"), ("11", "CachedInteractive"),
    ])),
    fd("host.hostname", "host.ip.0"),
    fd("host.ip.0", "host.hostname"),
    fd("host.hostname", "host.mac.0"),
    fd("host.hostname", "winlog.computer_name"),
    fd("agent.name", "agent.id"),
    same("agent.name", "host.hostname"),
    // Internal network logons only: a 4624 type 10 names the local machine as its workstation
    // (Windows does), and an attacker's tool chooses any workstation name per attempt.
    fd("source.domain", "source.ip").when(INTERNAL_NETWORK_LOGON),
    fd("source.ip", "source.domain").when(INTERNAL_NETWORK_LOGON),
    fd("user.name", "user.id"),
    fd("user.id", "user.name").when(&[StartsWith("user.id", "S-1-5-21-")]),
    same("user.name", "winlog.event_data.TargetUserName").when(&[IsNot("event.code", "4688")]),
    same("user.name", "winlog.event_data.SubjectUserName").when(&[Is("event.code", "4688")]),
    // A 4625 names no SID for the account (always the NULL SID S-1-0-0).
    fd("winlog.event_data.TargetUserName", "winlog.event_data.TargetUserSid").when(&[Is("event.code", "4624")]),
    fd("winlog.event_data.SubjectUserName", "winlog.event_data.SubjectUserSid"),
    rule("process.executable", "process.name", Basename),
    rule("process.parent.executable", "process.parent.name", Basename),
    rule("process.command_line", "process.name", Runs),
    same("process.executable", "winlog.event_data.NewProcessName"),
    same("process.parent.executable", "winlog.event_data.ParentProcessName"),
    same("process.command_line", "winlog.event_data.CommandLine"),
    rule("process.pid", "winlog.event_data.NewProcessId", Hex),
    rule("process.parent.pid", "winlog.event_data.ProcessId", Hex).when(&[Is("event.code", "4688")]),
    same("winlog.logon.id", "winlog.event_data.TargetLogonId").when(&[Is("event.code", "4624")]),
];

const INTERNAL_NETWORK_LOGON: &[Cond] = &[
    Is("winlog.event_data.LogonType", "3"),
    StartsWith("source.ip", "10."),
];

// ---------------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------------

/// One test per pack, so each pack's findings stand alone.
macro_rules! pack_tests {
    ($($name:ident => $id:literal),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check_pack($id);
            }
        )*
    };
}

pack_tests! {
    aws_cloudtrail => "aws.cloudtrail",
    aws_guardduty => "aws.guardduty",
    crowdstrike_falcon => "crowdstrike.falcon",
    firewall_cef => "firewall.cef",
    firewall_cef_syslog => "firewall.cef.syslog",
    firewall_traffic => "firewall.traffic",
    identity_okta => "identity.okta",
    linux_auditd => "linux.auditd",
    linux_syslog => "linux.syslog",
    m365_audit => "m365.audit",
    paloalto_traffic => "paloalto.traffic",
    windows_security => "windows.security",
}

#[test]
fn every_pack_has_rules() {
    let cat = Catalog::discover(None).unwrap();
    let ids: Vec<&str> = PACKS.iter().map(|p| p.id).collect();
    assert_eq!(cat.ids(), ids);
}

/// Renders `SAMPLE` events of pack `id`, checks every rule of its table and fails with each
/// broken rule's share of events and a few examples.
fn check_pack(id: &str) {
    let pack = PACKS.iter().find(|p| p.id == id).expect("a rules table");
    let mut checks: Vec<Check> = pack.rules.iter().map(|r| Check::new(*r)).collect();
    let mut unparsed = Vec::new();
    each_event(id, SAMPLE, |i, text| match (pack.parse)(text) {
        Ok(fields) => checks.iter_mut().for_each(|c| c.observe(&fields, i)),
        Err(e) => unparsed.push(format!("event {i}: {e}: {text}")),
    });
    let mut problems: Vec<String> = checks.iter().filter_map(Check::verdict).collect();
    if !unparsed.is_empty() {
        let some: Vec<&String> = unparsed.iter().take(EXAMPLES).collect();
        problems.push(format!(
            "{} events do not parse, e.g. {some:#?}",
            unparsed.len()
        ));
    }
    assert!(
        problems.is_empty(),
        "{id}: {} problem(s) in {SAMPLE} events:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Random ids (UUIDs, and hex ids of 16 digits or more) must differ between sources rendered
/// with one seed; ids written in a pack file or carried by a shared entity are the same on
/// purpose and are left out.
#[test]
fn no_random_id_is_shared_between_packs() {
    let fixed = fixed_ids();
    let per_pack: Vec<(&str, HashSet<String>)> = PACKS
        .iter()
        .map(|p| {
            let mut seen = HashSet::new();
            each_event(p.id, SAMPLE / 4, |_, text| {
                seen.extend(ids_in(text).filter(|x| !fixed.contains(x)));
            });
            (p.id, seen)
        })
        .collect();
    let mut shared = Vec::new();
    for (i, (a, ids_a)) in per_pack.iter().enumerate() {
        for (b, ids_b) in &per_pack[i + 1..] {
            let both: Vec<&String> = ids_a.intersection(ids_b).collect();
            if !both.is_empty() {
                shared.push(format!(
                    "{a} and {b}: {} ids, e.g. {:?}",
                    both.len(),
                    &both[..1]
                ));
            }
        }
    }
    assert!(
        shared.is_empty(),
        "ids shared between packs:\n{}",
        shared.join("\n")
    );
    for (id, ids) in &per_pack {
        let draws_ids = RANDOM_ID_PACKS.contains(id);
        assert_eq!(!ids.is_empty(), draws_ids, "{id}: {} random ids", ids.len());
    }
}

/// The packs whose templates draw UUIDs or long hex ids.
const RANDOM_ID_PACKS: &[&str] = &[
    "aws.cloudtrail",
    "aws.guardduty",
    "crowdstrike.falcon",
    "identity.okta",
    "linux.syslog",
    "m365.audit",
    "windows.security",
];

/// Ids that may repeat across packs: those in the pack files and in the entity pools.
fn fixed_ids() -> HashSet<String> {
    let mut fixed = HashSet::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("packs");
    for p in PACKS {
        let text = std::fs::read_to_string(dir.join(format!("{}.yaml", p.id))).unwrap();
        fixed.extend(ids_in(&text));
    }
    let entities = Entities::generate(SEED, &Sizes::default());
    for kind in EntityKind::ALL {
        let pool = entities.pool(kind);
        for i in 0..pool.len() {
            for a in 0..kind.attributes().len() {
                fixed.extend(ids_in(pool.get(i, a)));
            }
        }
    }
    fixed
}

/// UUIDs and long hex ids in `text`, lower-cased.
fn ids_in(text: &str) -> impl Iterator<Item = String> + '_ {
    // Bytes, not chars, and words shorter than any id skipped first: this runs over every
    // byte of 60,000 events in a debug build.
    text.as_bytes()
        .split(|&b| !b.is_ascii_alphanumeric() && b != b'-')
        .filter(|word| word.len() >= 16)
        .map(|word| std::str::from_utf8(word).expect("ASCII"))
        .flat_map(|word| {
            let uuid = is_uuid(word).then_some(word);
            let hex = word.split('-').filter(|w| is_hex_id(w));
            uuid.into_iter().chain(hex)
        })
        .map(str::to_ascii_lowercase)
}

fn is_uuid(w: &str) -> bool {
    let parts: Vec<&str> = w.split('-').collect();
    parts.len() == 5
        && parts
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(p, n)| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn is_hex_id(w: &str) -> bool {
    w.len() >= 16
        && w.bytes().all(|b| b.is_ascii_hexdigit())
        && w.bytes().any(|b| b.is_ascii_alphabetic())
        && w.bytes().any(|b| b.is_ascii_digit())
}

// ---------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------

fn compiled(id: &str) -> Arc<CompiledPack> {
    let cat = Catalog::discover(None).unwrap();
    let entities = Entities::generate(SEED, &Sizes::default());
    pack::load_compiled(&cat, id, &semver::VersionReq::STAR, &entities, true)
        .unwrap_or_else(|e| panic!("{id}: {e:?}"))
}

/// Calls `f` with each of `n` events of pack `id` (a fixed seed, anchor and run id).
fn each_event(id: &str, n: u64, mut f: impl FnMut(u64, &str)) {
    let p = compiled(id);
    let mut g = Generator::new(p.program.clone(), SEED, "r-consistency");
    let t0 = parse_rfc3339("2026-01-05T09:00:00.125Z").unwrap();
    let mut out = Vec::new();
    for i in 0..n {
        out.clear();
        let ctx = EventCtx {
            index: i,
            time_ns: t0 + i as i64 * 250_000_000,
            agent: 1,
            seq: i,
            sent_ms: None,
        };
        g.render(&ctx, &mut out);
        f(i, &String::from_utf8_lossy(&out));
    }
}

// ---------------------------------------------------------------------------------------------
// Checking
// ---------------------------------------------------------------------------------------------

/// One event's fields by path.
type Fields = HashMap<String, String>;

/// Values that state nothing; a rule skips an event where its key or dependent is one.
const BLANK: &[&str] = &["", "-", "?"];

/// The value at `path`, or the pair of values for `a + b`; `None` when any is absent or blank.
fn lookup(f: &Fields, path: &str) -> Option<String> {
    let parts: Option<Vec<&str>> = path
        .split(" + ")
        .map(|p| f.get(p).map(String::as_str).filter(|v| !BLANK.contains(v)))
        .collect();
    parts.map(|p| p.join(" + "))
}

fn holds(c: &Cond, f: &Fields) -> bool {
    let get = |p: &str| f.get(p).map(String::as_str);
    match *c {
        Is(p, v) => get(p) == Some(v),
        IsNot(p, v) => get(p) != Some(v),
        StartsWith(p, v) => get(p).is_some_and(|x| x.starts_with(v)),
    }
}

/// One rule's tally over a sample.
struct Check {
    rule: Rule,
    applied: u64,
    failed: u64,
    examples: Vec<String>,
    /// For `Fd`: the first dependent value seen for each key value.
    first: HashMap<String, String>,
}

impl Check {
    fn new(rule: Rule) -> Check {
        Check {
            rule,
            applied: 0,
            failed: 0,
            examples: Vec::new(),
            first: HashMap::new(),
        }
    }

    fn observe(&mut self, f: &Fields, event: u64) {
        if !self.rule.when.iter().all(|c| holds(c, f)) {
            return;
        }
        let (Some(key), Some(dep)) = (lookup(f, self.rule.key), lookup(f, self.rule.dep)) else {
            return;
        };
        let Some(verdict) = judge(self.rule.rel, &key, &dep, &mut self.first) else {
            return;
        };
        self.applied += 1;
        if let Err(why) = verdict {
            self.failed += 1;
            if self.examples.len() < EXAMPLES {
                self.examples.push(format!("event {event}: {why}"));
            }
        }
    }

    /// What is wrong with the rule over the sample, if anything.
    fn verdict(&self) -> Option<String> {
        let Rule { key, dep, .. } = self.rule;
        if self.applied == 0 {
            return Some(format!(
                "{key} → {dep}: never applied (a path or condition is wrong)"
            ));
        }
        (self.failed > 0).then(|| {
            format!(
                "{key} → {dep}: {} of {} events disagree ({:.1}%), e.g.\n    {}",
                self.failed,
                self.applied,
                100.0 * self.failed as f64 / self.applied as f64,
                self.examples.join("\n    ")
            )
        })
    }
}

/// Whether `dep` relates to `key` as `rel` says; `None` where the relation says nothing about
/// this key value.
fn judge(
    rel: Rel,
    key: &str,
    dep: &str,
    first: &mut HashMap<String, String>,
) -> Option<Result<(), String>> {
    let ok = match rel {
        Fd => {
            let was = first
                .entry(key.to_string())
                .or_insert_with(|| dep.to_string());
            if was != dep {
                return Some(Err(format!("{key:?} has {dep:?}, earlier {was:?}")));
            }
            true
        }
        Same => key == dep,
        Basename => basename(key) == dep,
        // Windows finds `powershell` as `powershell.exe`.
        Runs => {
            let p = program(key);
            p.eq_ignore_ascii_case(dep)
                || dep
                    .strip_suffix(".exe")
                    .is_some_and(|d| p.eq_ignore_ascii_case(d))
        }
        Browser => ua_browser(key) == dep.to_ascii_lowercase(),
        Os => ua_os(key) == os_family(dep),
        Contains => dep.contains(key),
        Maps(pairs) => {
            let allowed: Vec<&str> = listed(pairs, key).collect();
            if allowed.is_empty() {
                return None;
            }
            allowed.contains(&dep)
        }
        Says(pairs) => {
            let texts: Vec<&str> = listed(pairs, key).collect();
            if texts.is_empty() {
                return None;
            }
            texts.iter().any(|t| dep.contains(t))
        }
        Hex => {
            let hex = dep
                .strip_prefix("0x")
                .and_then(|h| u64::from_str_radix(h, 16).ok());
            let decimal = key.parse::<u64>().ok();
            decimal.is_some() && hex == decimal
        }
    };
    Some(if ok {
        Ok(())
    } else {
        Err(format!("{key:?} with {dep:?}"))
    })
}

fn listed<'a>(
    pairs: &'a [(&'static str, &'static str)],
    key: &'a str,
) -> impl Iterator<Item = &'static str> + 'a {
    pairs
        .iter()
        .filter(move |(k, _)| *k == key)
        .map(|(_, v)| *v)
}

/// The last component of a Windows or Unix path.
fn basename(path: &str) -> &str {
    path.rsplit(['\\', '/']).next().unwrap_or(path)
}

/// The basename of the program a command line runs (its first word, or its quoted first part).
fn program(cmdline: &str) -> &str {
    let first = match cmdline.strip_prefix('"') {
        Some(rest) => rest.split('"').next().unwrap_or(rest),
        None => cmdline.split(' ').next().unwrap_or(cmdline),
    };
    basename(first)
}

/// The browser family a user agent names, lower case; `unknown` for a script or tool.
fn ua_browser(ua: &str) -> &'static str {
    if !ua.starts_with("Mozilla/5.0 (") {
        "unknown"
    } else if ua.contains(" Edg/") {
        "edge"
    } else if ua.contains(" Firefox/") {
        "firefox"
    } else if ua.contains(" Chrome/") {
        "chrome"
    } else if ua.contains(" Version/") && ua.contains(" Safari/") {
        "safari"
    } else {
        "unknown"
    }
}

/// The OS family a user agent names.
fn ua_os(ua: &str) -> &'static str {
    if ua.contains("(Windows NT ") {
        "windows"
    } else if ua.contains("(Macintosh;") {
        "mac"
    } else if ua.contains("Linux") {
        "linux"
    } else {
        "unknown"
    }
}

/// The OS family of a parsed OS or platform value (Okta `Windows 10`, Entra `Windows10`,
/// SharePoint `WinDesktop`, `Mac OS X`, `MacOs`, `MacDesktop` …).
fn os_family(parsed: &str) -> String {
    let v = parsed.to_ascii_lowercase();
    for (prefix, family) in [("win", "windows"), ("mac", "mac"), ("linux", "linux")] {
        if v.starts_with(prefix) {
            return family.to_string();
        }
    }
    v
}

// ---------------------------------------------------------------------------------------------
// Parsing each format into fields
// ---------------------------------------------------------------------------------------------

fn parse_json(line: &str) -> Result<Fields, String> {
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let mut f = Fields::new();
    flatten("", &v, &mut f);
    Ok(f)
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn flatten(path: &str, v: &serde_json::Value, out: &mut Fields) {
    use serde_json::Value;
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| flatten(&join(path, k), x, out)),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                if let (Some(Value::String(name)), Some(value)) = (x.get("Name"), x.get("Value")) {
                    flatten(&join(path, name), value, out);
                }
                flatten(&join(path, &i.to_string()), x, out);
            }
        }
        Value::Null => {}
        Value::String(s) => {
            out.insert(path.to_string(), s.clone());
        }
        other => {
            out.insert(path.to_string(), other.to_string());
        }
    }
}

/// LAUREL JSON, with each record's `msg` (`op=… acct="…" addr=… res=…`) split into
/// `….msg.<key>` fields.
fn parse_auditd(line: &str) -> Result<Fields, String> {
    let mut f = parse_json(line)?;
    let msgs: Vec<(String, String)> = f
        .iter()
        .filter(|(k, _)| k.ends_with(".msg"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (path, msg) in msgs {
        for (k, v) in key_values(&msg) {
            f.insert(format!("{path}.{k}"), v.to_string());
        }
    }
    Ok(f)
}

/// `k=v` pairs separated by spaces, a value optionally in double quotes.
fn key_values(s: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = s.trim_start();
    while let Some(eq) = rest.find('=') {
        let key = &rest[..eq];
        let after = &rest[eq + 1..];
        let (value, next) = match after.strip_prefix('"') {
            Some(q) => q.split_once('"').unwrap_or((q, "")),
            None => after.split_once(' ').unwrap_or((after, "")),
        };
        out.push((key, value));
        rest = next.trim_start();
    }
    out
}

/// A bare CEF line.
fn parse_cef(line: &str) -> Result<Fields, String> {
    let at = line.find("CEF:").ok_or("no CEF:")?;
    cef_fields(&line[at + 4..])
}

/// CEF after an RFC 5424 header: `<PRI>1 TIMESTAMP HOST APP PROCID MSGID SD CEF:…`.
fn parse_cef_syslog(line: &str) -> Result<Fields, String> {
    let at = line.find("CEF:").ok_or("no CEF:")?;
    let header: Vec<&str> = line[..at].split(' ').collect();
    let mut f = cef_fields(&line[at + 4..])?;
    syslog_header(
        &mut f,
        header.first().copied(),
        header.get(2),
        header.get(3),
    )?;
    Ok(f)
}

fn syslog_header(
    f: &mut Fields,
    pri: Option<&str>,
    host: Option<&&str>,
    app: Option<&&str>,
) -> Result<(), String> {
    let pri = pri
        .and_then(|p| p.strip_prefix('<'))
        .and_then(|p| p.split('>').next())
        .ok_or("no PRI")?;
    f.insert("syslog.pri".into(), pri.to_string());
    f.insert("syslog.host".into(), host.ok_or("no HOSTNAME")?.to_string());
    f.insert("syslog.app".into(), app.ok_or("no APP-NAME")?.to_string());
    Ok(())
}

/// The 7 header fields (`cef.0` … `cef.6`), the extension pairs, and `cs.<Label>` for each
/// `csN`/`csNLabel` pair. Escapes as in `tests/packs.rs`: `\|` `\\` in the header; `\=` `\\`
/// `\n` `\r` in values; keys start after a space and end at an unescaped `=`.
fn cef_fields(s: &str) -> Result<Fields, String> {
    let mut f = Fields::new();
    let mut chars = s.chars();
    let mut cur = String::new();
    let mut n = 0;
    while n < 7 {
        match chars.next().ok_or("CEF header ends early")? {
            '\\' => cur.push(chars.next().ok_or("dangling escape")?),
            '|' => {
                f.insert(format!("cef.{n}"), std::mem::take(&mut cur));
                n += 1;
            }
            c => cur.push(c),
        }
    }
    let ext: Vec<char> = chars.collect();
    for (key, value) in extension_pairs(&ext)? {
        f.insert(key, value);
    }
    for i in 1..=6 {
        if let (Some(label), Some(v)) = (f.get(&format!("cs{i}Label")), f.get(&format!("cs{i}"))) {
            f.insert(format!("cs.{label}"), v.clone());
        }
    }
    Ok(f)
}

fn extension_pairs(ext: &[char]) -> Result<Vec<(String, String)>, String> {
    // (key start, '=' index) of each pair.
    let mut marks = Vec::new();
    let (mut i, mut key_start) = (0, 0);
    while i < ext.len() {
        match ext[i] {
            '\\' => i += 1,
            '=' => marks.push((key_start, i)),
            ' ' => key_start = i + 1,
            _ => {}
        }
        i += 1;
    }
    let mut pairs = Vec::new();
    for (n, &(start, eq)) in marks.iter().enumerate() {
        let end = marks
            .get(n + 1)
            .map_or(ext.len(), |(next, _)| next.saturating_sub(1));
        let key: String = ext[start..eq].iter().collect();
        let raw: String = ext[eq + 1..end.max(eq + 1)].iter().collect();
        pairs.push((key, unescape_cef(&raw)?));
    }
    Ok(pairs)
}

fn unescape_cef(raw: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut it = raw.chars();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(e @ ('=' | '\\')) => out.push(e),
            other => return Err(format!("bad escape \\{other:?}")),
        }
    }
    Ok(out)
}

/// sshd / sudo lines in RFC 5424: the header, and from the message `pam.user`/`pam.uid`
/// (`session opened for user NAME(uid=N)`), `pam.by`/`pam.by_uid` (`by NAME(uid=N)`), and
/// sudo's `NAME : K=V ; …` as `sudo.user`, `sudo.<K>`.
fn parse_linux_syslog(line: &str) -> Result<Fields, String> {
    let m = syslog_rfc5424::parse_message(line).map_err(|e| e.to_string())?;
    let mut f = Fields::new();
    let host = m.hostname.clone().unwrap_or_default();
    let app = m.appname.clone().unwrap_or_default();
    syslog_header(
        &mut f,
        line.split(' ').next(),
        Some(&host.as_str()),
        Some(&app.as_str()),
    )?;
    let msg = m.msg.as_str();
    if let Some((name, uid)) = after(msg, "session opened for user ").and_then(name_uid) {
        f.insert("pam.user".into(), name.into());
        f.insert("pam.uid".into(), uid.into());
    }
    if let Some((name, uid)) = after(msg, ") by ").and_then(name_uid) {
        f.insert("pam.by".into(), name.into());
        f.insert("pam.by_uid".into(), uid.into());
    }
    if let Some((user, rest)) = msg.split_once(" : ").filter(|_| app == "sudo") {
        f.insert("sudo.user".into(), user.into());
        for (k, v) in rest.split(" ; ").filter_map(|p| p.split_once('=')) {
            f.insert(format!("sudo.{k}"), v.into());
        }
    }
    Ok(f)
}

fn after<'a>(s: &'a str, marker: &str) -> Option<&'a str> {
    s.find(marker).map(|at| &s[at + marker.len()..])
}

/// `NAME(uid=N)…` → (NAME, N).
fn name_uid(s: &str) -> Option<(&str, &str)> {
    let (name, rest) = s.split_once("(uid=")?;
    let (uid, _) = rest.split_once(')')?;
    Some((name, uid))
}

/// The PAN-OS 10.2 TRAFFIC columns the rules name, by their index in the CSV.
const PANOS_COLUMNS: &[(usize, &str)] = &[
    (2, "serial"),
    (4, "subtype"),
    (7, "src"),
    (8, "dst"),
    (11, "rule"),
    (14, "app"),
    (29, "proto"),
    (30, "action"),
    (41, "src_location"),
    (42, "dst_location"),
    (46, "session_end_reason"),
    (52, "device_name"),
    (65, "rule_uuid"),
    (105, "subcategory"),
    (106, "category"),
    (107, "technology"),
    (108, "risk"),
    (109, "characteristics"),
];

/// `<PRI>Mmm dd hh:mm:ss HOST csv…` with the CSV's columns named by `PANOS_COLUMNS`.
fn parse_panos(line: &str) -> Result<Fields, String> {
    let gt = line.find('>').ok_or("no PRI")?;
    // The RFC 3164 timestamp is 15 characters and a space.
    let rest = line.get(gt + 1 + 16..).ok_or("short header")?;
    let (host, csv) = rest.split_once(' ').ok_or("no HOSTNAME")?;
    let cols = split_csv(csv)?;
    if cols.len() < 115 {
        return Err(format!("{} columns", cols.len()));
    }
    let mut f: Fields = PANOS_COLUMNS
        .iter()
        .map(|&(i, name)| (name.to_string(), cols[i].clone()))
        .collect();
    syslog_header(&mut f, Some(line), Some(&host), Some(&"pan-os"))?;
    Ok(f)
}

/// Comma-separated values; a value in double quotes may hold commas (`""` is a quote).
fn split_csv(s: &str) -> Result<Vec<String>, String> {
    let mut cols = vec![String::new()];
    let mut quoted = false;
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        let col = cols.last_mut().ok_or("no column")?;
        match (c, quoted) {
            ('"', false) if col.is_empty() => quoted = true,
            ('"', true) if it.peek() == Some(&'"') => {
                col.push('"');
                it.next();
            }
            ('"', true) => quoted = false,
            (',', false) => cols.push(String::new()),
            (c, _) => col.push(c),
        }
    }
    if quoted {
        return Err("unterminated quote".into());
    }
    Ok(cols)
}
