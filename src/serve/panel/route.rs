//! The control panel's routes: a request's method and path (percent-decoded, one segment at a
//! time) and query become a `Route`, or a refusal (404 no such route, 405 with the methods the
//! path takes). Names in paths are decoded here and checked by `files::Dir`; nothing here
//! touches the disk.

use percent_encoding::percent_decode_str;

use crate::serve::guard::Verb;
pub use crate::serve::status::Action;

/// The panel's static files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asset {
    Page,
    Script,
    Style,
}

/// The two kinds of text files the panel keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Configs,
    Scenarios,
}

impl Kind {
    /// The flag that gives the directory, for messages.
    pub fn flag(self) -> &'static str {
        match self {
            Kind::Configs => "--configs-dir",
            Kind::Scenarios => "--scenarios-dir",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    Asset(Asset),
    Info,
    Packs,
    Pack(String),
    PackSample {
        id: String,
        seed: Option<u64>,
        count: Option<usize>,
    },
    Attack,
    List(Kind),
    Read(Kind, String),
    Validate(Kind),
    Preview,
    Save(Kind, String),
    Delete(Kind, String),
    Reports,
    Report {
        name: String,
        download: bool,
    },
    ReportCsv(String),
    Compare {
        a: Option<String>,
        b: Option<String>,
    },
    RunStatus,
    RunStart,
    Control(Action),
}

/// Why a request has no route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoRoute {
    NotFound,
    /// The path exists; these methods are what it takes.
    Method(&'static str),
    /// A path segment or query value that does not decode to UTF-8 text.
    BadEncoding,
}

impl Route {
    /// Whether the route reads only: no token needed for the static files, and the serving
    /// loop may answer it without reading a body.
    pub fn is_asset(&self) -> bool {
        matches!(self, Route::Asset(_))
    }
}

/// The route of `verb` on `target` (a path with its query, as the request line has it).
pub fn route(verb: Verb, target: &str) -> Result<Route, NoRoute> {
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let raw: Vec<&str> = match path.strip_prefix('/') {
        Some("") => Vec::new(),
        Some(p) => p.split('/').collect(),
        None => return Err(NoRoute::NotFound),
    };
    let mut seg = Vec::with_capacity(raw.len());
    for s in raw {
        seg.push(decode(s)?);
    }
    let q = Query::parse(query);
    let seg: Vec<&str> = seg.iter().map(String::as_str).collect();
    use Verb::*;
    let (route, allowed): (Option<Route>, &'static str) = match (verb, seg.as_slice()) {
        (Get, []) => (Some(Route::Asset(Asset::Page)), "GET"),
        (_, []) => (None, "GET"),
        (Get, ["panel.js"]) => (Some(Route::Asset(Asset::Script)), "GET"),
        (Get, ["panel.css"]) => (Some(Route::Asset(Asset::Style)), "GET"),
        (_, ["panel.js" | "panel.css"]) => (None, "GET"),
        (v, ["api", rest @ ..]) => api(v, rest, &q)?,
        _ => return Err(NoRoute::NotFound),
    };
    route.ok_or(NoRoute::Method(allowed))
}

/// The routes under `/api/`: `(Some(route), _)` when the method fits, `(None, allowed)` when
/// the path exists but takes other methods.
fn api(verb: Verb, seg: &[&str], q: &Query) -> Result<(Option<Route>, &'static str), NoRoute> {
    use Verb::*;
    let get = |r: Route| (matches!(verb, Get).then_some(r), "GET");
    let post = |r: Route| (matches!(verb, Post).then_some(r), "POST");
    Ok(match seg {
        ["info"] => get(Route::Info),
        ["attack"] => get(Route::Attack),
        ["packs"] => get(Route::Packs),
        ["packs", id] => get(Route::Pack(id.to_string())),
        ["packs", id, "sample"] => get(Route::PackSample {
            id: id.to_string(),
            seed: q.number("seed")?,
            count: q.number("count")?,
        }),
        ["configs"] => get(Route::List(Kind::Configs)),
        ["scenarios"] => get(Route::List(Kind::Scenarios)),
        ["configs", "validate"] => post(Route::Validate(Kind::Configs)),
        ["scenarios", "validate"] => post(Route::Validate(Kind::Scenarios)),
        ["scenarios", "preview"] => post(Route::Preview),
        [dir @ ("configs" | "scenarios"), name] => {
            let kind = if *dir == "configs" {
                Kind::Configs
            } else {
                Kind::Scenarios
            };
            let name = name.to_string();
            let r = match verb {
                Get => Some(Route::Read(kind, name)),
                Put => Some(Route::Save(kind, name)),
                Delete => Some(Route::Delete(kind, name)),
                _ => None,
            };
            (r, "GET, PUT, DELETE")
        }
        ["reports"] => get(Route::Reports),
        ["reports", "compare"] => get(Route::Compare {
            a: q.text("a")?,
            b: q.text("b")?,
        }),
        ["reports", name] => get(Route::Report {
            name: name.to_string(),
            download: q.text("download")?.is_some_and(|v| v != "0"),
        }),
        ["reports", name, "csv"] => get(Route::ReportCsv(name.to_string())),
        ["run"] => {
            let r = match verb {
                Get => Some(Route::RunStatus),
                Post => Some(Route::RunStart),
                _ => None,
            };
            (r, "GET, POST")
        }
        ["run", action] => {
            let a = match *action {
                "stop" => Action::Stop,
                "pause" => Action::Pause,
                "resume" => Action::Resume,
                "rate" => Action::Rate,
                _ => return Err(NoRoute::NotFound),
            };
            post(Route::Control(a))
        }
        _ => return Err(NoRoute::NotFound),
    })
}

/// One path segment, percent-decoded (`%2f` becomes `/`, which no file name takes).
fn decode(s: &str) -> Result<String, NoRoute> {
    percent_decode_str(s)
        .decode_utf8()
        .map(|c| c.into_owned())
        .map_err(|_| NoRoute::BadEncoding)
}

/// A query string's pairs, decoded as a form (`+` is a space).
struct Query(Vec<(String, String)>);

impl Query {
    fn parse(q: &str) -> Query {
        Query(form_urlencoded::parse(q.as_bytes()).into_owned().collect())
    }

    fn text(&self, key: &str) -> Result<Option<String>, NoRoute> {
        Ok(self
            .0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone()))
    }

    /// A number, or not given; anything else is not a route (the caller says 404 with the
    /// reason), so `?seed=abc` is refused rather than ignored.
    fn number<T: std::str::FromStr>(&self, key: &str) -> Result<Option<T>, NoRoute> {
        match self.text(key)? {
            None => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|_| NoRoute::BadEncoding),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Verb::*;

    #[test]
    fn routes() {
        let ok = |v, p: &str| route(v, p).unwrap();
        assert_eq!(ok(Get, "/"), Route::Asset(Asset::Page));
        assert_eq!(ok(Get, "/?x=1"), Route::Asset(Asset::Page));
        assert_eq!(ok(Get, "/panel.js"), Route::Asset(Asset::Script));
        assert_eq!(ok(Get, "/api/info"), Route::Info);
        assert_eq!(
            ok(Get, "/api/packs/aws.cloudtrail/sample?seed=7&count=2"),
            Route::PackSample {
                id: "aws.cloudtrail".into(),
                seed: Some(7),
                count: Some(2)
            }
        );
        assert_eq!(
            ok(Get, "/api/configs/a.yaml"),
            Route::Read(Kind::Configs, "a.yaml".into())
        );
        assert_eq!(
            ok(Put, "/api/scenarios/b.yaml"),
            Route::Save(Kind::Scenarios, "b.yaml".into())
        );
        assert_eq!(
            ok(Delete, "/api/configs/a.yaml"),
            Route::Delete(Kind::Configs, "a.yaml".into())
        );
        assert_eq!(
            ok(Post, "/api/configs/validate"),
            Route::Validate(Kind::Configs)
        );
        assert_eq!(
            ok(Get, "/api/reports/compare?a=x.json&b=last"),
            Route::Compare {
                a: Some("x.json".into()),
                b: Some("last".into())
            }
        );
        assert_eq!(
            ok(Get, "/api/reports/r.json?download=1"),
            Route::Report {
                name: "r.json".into(),
                download: true
            }
        );
        assert_eq!(
            ok(Get, "/api/reports/r.json/csv"),
            Route::ReportCsv("r.json".into())
        );
        assert_eq!(ok(Post, "/api/run"), Route::RunStart);
        assert_eq!(ok(Post, "/api/run/rate"), Route::Control(Action::Rate));
    }

    #[test]
    fn names_are_decoded_for_the_directory_to_judge() {
        // `..%2f` decodes to a name with a separator: the route carries it, `Dir` refuses it.
        assert_eq!(
            route(Get, "/api/configs/..%2f..%2fetc%2fpasswd").unwrap(),
            Route::Read(Kind::Configs, "../../etc/passwd".into())
        );
        assert_eq!(
            route(Get, "/api/configs/%2Fetc%2Fpasswd").unwrap(),
            Route::Read(Kind::Configs, "/etc/passwd".into())
        );
        // A literal `..` segment is its own path: nothing routes it.
        assert_eq!(route(Get, "/api/configs/../x.yaml"), Err(NoRoute::NotFound));
        assert_eq!(
            route(Get, "/api/configs/%ff.yaml"),
            Err(NoRoute::BadEncoding)
        );
        assert_eq!(
            route(Get, "/api/packs/x/sample?seed=abc"),
            Err(NoRoute::BadEncoding)
        );
    }

    #[test]
    fn methods_and_unknown_paths() {
        assert_eq!(route(Post, "/"), Err(NoRoute::Method("GET")));
        assert_eq!(route(Post, "/api/info"), Err(NoRoute::Method("GET")));
        assert_eq!(route(Get, "/api/run/stop"), Err(NoRoute::Method("POST")));
        assert_eq!(
            route(Post, "/api/configs/a.yaml"),
            Err(NoRoute::Method("GET, PUT, DELETE"))
        );
        assert_eq!(route(Delete, "/api/run"), Err(NoRoute::Method("GET, POST")));
        for p in [
            "/nope",
            "/api",
            "/api/",
            "/api/run/explode",
            "/api/packs/a/b/c",
            "api/info",
            "/api/info/",
        ] {
            assert_eq!(route(Get, p), Err(NoRoute::NotFound), "{p}");
        }
    }
}
