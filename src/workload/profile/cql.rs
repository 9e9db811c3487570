//! The parts of CQL a profile needs read: a `CREATE TABLE` (columns, types, primary key) and
//! which column each `?` of a query binds.

use std::fmt;

/// The column types profiles can generate values for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CqlType {
    Text,
    Ascii,
    Blob,
    TinyInt,
    SmallInt,
    Int,
    BigInt,
    Varint,
    Float,
    Double,
    Decimal,
    Uuid,
    TimeUuid,
    Timestamp,
    Date,
    Time,
    Inet,
    Boolean,
    Counter,
    List(Box<CqlType>),
    Set(Box<CqlType>),
    Map(Box<CqlType>, Box<CqlType>),
}

/// A table definition, query or column type cqlbench cannot read: what is wrong, in words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CqlError(pub String);

impl From<&str> for CqlError {
    fn from(s: &str) -> Self {
        CqlError(s.to_string())
    }
}

const SUPPORTED: &str = "text, varchar, ascii, blob, tinyint, smallint, int, bigint, varint, float, double, decimal, uuid, timeuuid, timestamp, date, time, inet, boolean, counter, list, set, map (frozen or not)";

impl CqlType {
    pub fn parse(s: &str) -> Result<CqlType, CqlError> {
        let t = s.trim();
        let lower = t.to_ascii_lowercase();
        if let Some(inner) = generic(&lower, "frozen") {
            return CqlType::parse(inner);
        }
        if let Some(inner) = generic(&lower, "list") {
            return Ok(CqlType::List(Box::new(CqlType::parse(inner)?)));
        }
        if let Some(inner) = generic(&lower, "set") {
            return Ok(CqlType::Set(Box::new(CqlType::parse(inner)?)));
        }
        if let Some(inner) = generic(&lower, "map") {
            let parts = split_top(inner, ',');
            if parts.len() != 2 {
                return Err(CqlError(format!("'{t}': a map has a key and a value type")));
            }
            return Ok(CqlType::Map(
                Box::new(CqlType::parse(parts[0])?),
                Box::new(CqlType::parse(parts[1])?),
            ));
        }
        Ok(match lower.as_str() {
            "text" | "varchar" => CqlType::Text,
            "ascii" => CqlType::Ascii,
            "blob" => CqlType::Blob,
            "tinyint" => CqlType::TinyInt,
            "smallint" => CqlType::SmallInt,
            "int" => CqlType::Int,
            "bigint" => CqlType::BigInt,
            "varint" => CqlType::Varint,
            "float" => CqlType::Float,
            "double" => CqlType::Double,
            "decimal" => CqlType::Decimal,
            "uuid" => CqlType::Uuid,
            "timeuuid" => CqlType::TimeUuid,
            "timestamp" => CqlType::Timestamp,
            "date" => CqlType::Date,
            "time" => CqlType::Time,
            "inet" => CqlType::Inet,
            "boolean" => CqlType::Boolean,
            "counter" => CqlType::Counter,
            _ => {
                return Err(CqlError(format!(
                    "type '{t}' has no value generator (supported: {SUPPORTED})"
                )));
            }
        })
    }
}

impl fmt::Display for CqlType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CqlType::List(t) => write!(f, "list<{t}>"),
            CqlType::Set(t) => write!(f, "set<{t}>"),
            CqlType::Map(k, v) => write!(f, "map<{k}, {v}>"),
            other => f.write_str(&format!("{other:?}").to_ascii_lowercase()),
        }
    }
}

/// `NAME<inner>` → inner.
fn generic<'a>(s: &'a str, name: &str) -> Option<&'a str> {
    s.strip_prefix(name)?
        .trim_start()
        .strip_prefix('<')?
        .strip_suffix('>')
}

/// Splits at `sep` outside brackets, parentheses and quotes.
fn split_top(s: &str, sep: char) -> Vec<&str> {
    let (mut depth, mut quote, mut start) = (0i32, None, 0);
    let mut out = Vec::new();
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '<' | '{' | '[') => depth += 1,
            (None, ')' | '>' | '}' | ']') => depth -= 1,
            (None, c) if c == sep && depth == 0 => {
                out.push(s[start..i].trim());
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out
}

/// A column name as CQL stores it: quoted names keep their case, others are lower-cased.
fn column_name(s: &str) -> String {
    let t = s.trim();
    match t.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(q) => q.to_string(),
        None => t.to_ascii_lowercase(),
    }
}

/// A column of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub ty: CqlType,
}

/// What a `CREATE TABLE` says.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<Column>,
    pub partition_key: Vec<String>,
    pub clustering: Vec<String>,
}

impl Table {
    pub fn parse(cql: &str) -> Result<Table, CqlError> {
        let t = cql.trim().trim_end_matches(';');
        let lower = t.to_ascii_lowercase();
        let words: Vec<&str> = lower.split_whitespace().take(2).collect();
        if words != ["create", "table"] {
            return Err("does not begin with CREATE TABLE".into());
        }
        let open = t.find('(').ok_or("no '(' before the column list")?;
        let mut head = t[..open].split_whitespace().skip(2).collect::<Vec<_>>();
        if head.len() >= 3
            && head[..3]
                .iter()
                .map(|w| w.to_ascii_lowercase())
                .eq(["if", "not", "exists"])
        {
            head.drain(..3);
        }
        let name = head.first().ok_or("no table name")?;
        let name = column_name(name.rsplit('.').next().unwrap_or(name));
        let mut depth = 0;
        let mut close = None;
        for (i, c) in t[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(open + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let close = close.ok_or("the column list has no closing ')'")?;
        let mut columns = Vec::new();
        let mut key: Option<(Vec<String>, Vec<String>)> = None;
        for def in split_top(&t[open + 1..close], ',') {
            if def.is_empty() {
                continue;
            }
            let dl = def.to_ascii_lowercase();
            if dl.starts_with("primary key") {
                let inner = def[def.find('(').ok_or("PRIMARY KEY without '('")? + 1..]
                    .trim_end()
                    .strip_suffix(')')
                    .ok_or("PRIMARY KEY without ')'")?;
                let parts = split_top(inner, ',');
                let partition = match parts[0].strip_prefix('(') {
                    Some(p) => {
                        split_top(p.strip_suffix(')').ok_or("unbalanced partition key")?, ',')
                            .into_iter()
                            .map(column_name)
                            .collect()
                    }
                    None => vec![column_name(parts[0])],
                };
                key = Some((
                    partition,
                    parts[1..].iter().map(|c| column_name(c)).collect(),
                ));
                continue;
            }
            let (name, rest) = def
                .split_once(char::is_whitespace)
                .ok_or_else(|| CqlError(format!("column '{def}' has no type")))?;
            let mut ty = rest.trim().to_string();
            let rl = ty.to_ascii_lowercase();
            let inline_key = rl.ends_with("primary key");
            if inline_key {
                ty.truncate(ty.len() - "primary key".len());
            }
            if rl.ends_with(" static") {
                ty.truncate(ty.len() - " static".len());
            }
            let name = column_name(name);
            let ty = CqlType::parse(&ty).map_err(|e| CqlError(format!("column {name}: {e}")))?;
            if inline_key {
                key = Some((vec![name.clone()], Vec::new()));
            }
            columns.push(Column { name, ty });
        }
        let (partition_key, clustering) = key.ok_or("no PRIMARY KEY")?;
        for k in partition_key.iter().chain(&clustering) {
            if !columns.iter().any(|c| &c.name == k) {
                return Err(CqlError(format!(
                    "PRIMARY KEY names '{k}', which is not a column"
                )));
            }
        }
        Ok(Table {
            name,
            columns,
            partition_key,
            clustering,
        })
    }

    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    pub fn is_key(&self, name: &str) -> bool {
        self.partition_key
            .iter()
            .chain(&self.clustering)
            .any(|k| k == name)
    }
}

/// What a profile query does and which column each `?` binds.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub verb: Verb,
    pub binds: Vec<String>,
    /// A lightweight transaction (`IF NOT EXISTS`, `IF EXISTS`, `IF col = …`).
    pub lwt: bool,
    /// Columns its WHERE clause binds with `=`.
    pub equal: Vec<String>,
    /// Every marker of its WHERE clause is bound with `=`.
    pub only_equalities: bool,
    /// Its `LIMIT n`.
    pub limit: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Select,
    Insert,
    Update,
    Delete,
}

/// Tokens: identifiers (quoted kept as written), `?`, operators and punctuation.
fn tokens(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            continue;
        }
        if c == '"' || c == '\'' {
            let mut t = String::from(c);
            for d in chars.by_ref() {
                t.push(d);
                if d == c {
                    break;
                }
            }
            out.push(t);
        } else if c.is_alphanumeric() || c == '_' {
            let mut t = String::from(c);
            while let Some(&d) = chars.peek() {
                if d.is_alphanumeric() || d == '_' || d == '.' {
                    t.push(d);
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(t);
        } else if matches!(c, '<' | '>' | '!') && chars.peek() == Some(&'=') {
            chars.next();
            out.push(format!("{c}="));
        } else {
            out.push(c.to_string());
        }
    }
    out
}

impl Query {
    /// Reads `cql` against `table`: its verb, that it names the table, and the column of
    /// every marker.
    pub fn parse(cql: &str, table: &Table) -> Result<Query, CqlError> {
        let toks = tokens(cql.trim().trim_end_matches(';'));
        let upper: Vec<String> = toks.iter().map(|t| t.to_ascii_uppercase()).collect();
        let verb = match upper.first().map(String::as_str) {
            Some("SELECT") => Verb::Select,
            Some("INSERT") => Verb::Insert,
            Some("UPDATE") => Verb::Update,
            Some("DELETE") => Verb::Delete,
            _ => return Err("a query begins with SELECT, INSERT, UPDATE or DELETE".into()),
        };
        let after = |word: &str| upper.iter().position(|t| t == word).map(|i| i + 1);
        let target = match verb {
            Verb::Select | Verb::Delete => after("FROM"),
            Verb::Insert => after("INTO"),
            Verb::Update => Some(1),
        }
        .and_then(|i| toks.get(i))
        .ok_or("the query names no table")?;
        let target = column_name(target.rsplit('.').next().unwrap_or(target));
        if target != table.name {
            return Err(CqlError(format!(
                "the query is on table '{target}', the profile's table is '{}'",
                table.name
            )));
        }
        let known = |name: &str| -> Result<String, CqlError> {
            let n = column_name(name);
            match table.column(&n) {
                Some(_) => Ok(n),
                None => Err(CqlError(format!(
                    "column '{n}' is not in table {}",
                    table.name
                ))),
            }
        };
        let mut binds = if verb == Verb::Insert {
            insert_binds(&toks, &upper, &known)?
        } else {
            Vec::new()
        };
        // Everything else: `column OP ?` (=, <, >, <=, >=, IN, CONTAINS), after SET or WHERE.
        let start = if verb == Verb::Insert { toks.len() } else { 0 };
        let where_at = upper.iter().position(|t| t == "WHERE");
        let if_at = upper.iter().rposition(|t| t == "IF");
        let in_where = |i: usize| where_at.is_some_and(|w| i > w) && if_at.is_none_or(|f| i < f);
        let (mut equal, mut only_equalities) = (Vec::new(), true);
        for i in start..toks.len() {
            if toks[i] != "?" {
                continue;
            }
            let op = upper.get(i.wrapping_sub(1)).map(String::as_str);
            let col = i.checked_sub(2).map(|j| &toks[j]);
            // `col = col + ?` / `col = col - ?`: a counter increment or a collection append.
            let delta = matches!(op, Some("+" | "-"))
                && i >= 4
                && upper[i - 3] == "="
                && column_name(&toks[i - 4]) == column_name(&toks[i - 2]);
            if delta {
                binds.push(known(&toks[i - 2])?);
                continue;
            }
            match (op, col) {
                (Some(o @ ("=" | "<" | ">" | "<=" | ">=" | "IN" | "CONTAINS")), Some(c))
                    if c.starts_with(|ch: char| ch.is_alphabetic() || ch == '"' || ch == '_') =>
                {
                    let c = known(c)?;
                    if in_where(i) {
                        if o == "=" {
                            equal.push(c.clone());
                        } else {
                            only_equalities = false;
                        }
                    }
                    binds.push(c)
                }
                _ => {
                    return Err(CqlError(format!(
                        "marker {} is not bound to a column (use column = ?, <, >, <=, >=, IN or CONTAINS)",
                        binds.len() + 1
                    )));
                }
            }
        }
        let lwt = upper.iter().any(|t| t == "IF");
        let limit = upper
            .iter()
            .position(|t| t == "LIMIT")
            .and_then(|i| toks.get(i + 1))
            .and_then(|n| n.parse().ok());
        Ok(Query {
            verb,
            binds,
            lwt,
            equal,
            only_equalities,
            limit,
        })
    }
}

/// An INSERT's markers: the column each `?` of its VALUES list stands for.
fn insert_binds(
    toks: &[String],
    upper: &[String],
    known: &dyn Fn(&str) -> Result<String, CqlError>,
) -> Result<Vec<String>, CqlError> {
    let open = toks
        .iter()
        .position(|t| t == "(")
        .ok_or("INSERT without a column list")?;
    let close = toks
        .iter()
        .position(|t| t == ")")
        .ok_or("INSERT without ')'")?;
    let cols: Vec<&String> = toks[open + 1..close].iter().filter(|t| *t != ",").collect();
    let values = upper
        .iter()
        .position(|t| t == "VALUES")
        .ok_or("INSERT without VALUES")?;
    let mut binds = Vec::new();
    let (mut depth, mut pos) = (0, 0);
    for t in &toks[values + 1..] {
        match t.as_str() {
            "(" => depth += 1,
            ")" => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            "," if depth == 1 => pos += 1,
            "?" => binds.push(known(cols.get(pos).ok_or("more values than columns")?)?),
            _ => {}
        }
    }
    Ok(binds)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TYPESTEST: &str = "CREATE TABLE typestest (
        name text, choice boolean, date timestamp, address inet, dbl double, lval bigint,
        ival int, uid timeuuid, value blob, tags set<text>, attrs frozen<map<text, int>>,
        \"Mixed\" list<bigint>,
        PRIMARY KEY((name,choice), date, address, dbl, lval, ival, uid)
    ) WITH COMPACT STORAGE AND compaction = { 'class':'LeveledCompactionStrategy' }";

    #[test]
    fn a_table_reads_with_its_types_and_key() {
        let t = Table::parse(TYPESTEST).unwrap();
        assert_eq!(t.name, "typestest");
        assert_eq!(t.partition_key, vec!["name", "choice"]);
        assert_eq!(
            t.clustering,
            vec!["date", "address", "dbl", "lval", "ival", "uid"]
        );
        assert_eq!(
            t.column("tags").unwrap().ty,
            CqlType::Set(Box::new(CqlType::Text))
        );
        assert_eq!(
            t.column("attrs").unwrap().ty,
            CqlType::Map(Box::new(CqlType::Text), Box::new(CqlType::Int))
        );
        assert_eq!(t.column("Mixed").unwrap().ty.to_string(), "list<bigint>");
        let inline =
            Table::parse("create table if not exists ks.t (k int PRIMARY KEY, v text);").unwrap();
        assert_eq!(
            (inline.name.as_str(), inline.partition_key.clone()),
            ("t", vec!["k".to_string()])
        );
    }

    #[test]
    fn bad_tables_and_types_say_what_is_wrong() {
        for (cql, says) in [
            (
                "CREATE TABLE t (k int, v tuple<int, int>, PRIMARY KEY (k))",
                "has no value generator",
            ),
            (
                "CREATE TABLE t (k int, v duration, PRIMARY KEY (k))",
                "has no value generator",
            ),
            ("CREATE TABLE t (k int, v text)", "no PRIMARY KEY"),
            (
                "CREATE TABLE t (k int, PRIMARY KEY (j))",
                "'j', which is not a column",
            ),
            ("CREATE TABLE t (k int PRIMARY KEY", "no closing ')'"),
            ("SELECT * FROM t", "CREATE TABLE"),
        ] {
            let e = Table::parse(cql).unwrap_err();
            assert!(e.0.contains(says), "{cql}: {e}");
        }
    }

    #[test]
    fn query_markers_bind_their_columns() {
        let t = Table::parse(TYPESTEST).unwrap();
        let q = Query::parse(
            "select * from typestest where name = ? and choice = ? and date >= ? LIMIT 100",
            &t,
        )
        .unwrap();
        assert_eq!(
            (q.verb, q.binds.clone(), q.lwt),
            (
                Verb::Select,
                vec!["name".into(), "choice".into(), "date".into()],
                false
            )
        );
        let q = Query::parse(
            "UPDATE stresscql.typestest SET value = ? WHERE name = ? AND choice = ? IF value = ?",
            &t,
        )
        .unwrap();
        assert_eq!(q.binds, vec!["value", "name", "choice", "value"]);
        assert!(q.lwt);
        let q = Query::parse(
            "INSERT INTO typestest (name, choice, value) VALUES (?, ?, ?) IF NOT EXISTS",
            &t,
        )
        .unwrap();
        assert_eq!(
            (q.verb, q.binds.clone(), q.lwt),
            (
                Verb::Insert,
                vec!["name".into(), "choice".into(), "value".into()],
                true
            )
        );
        let c = Table::parse(
            "CREATE TABLE pv (site text, page text, views counter, PRIMARY KEY (site, page))",
        )
        .unwrap();
        let q = Query::parse(
            "update pv set views = views + ? where site = ? and page = ?",
            &c,
        )
        .unwrap();
        assert_eq!(q.binds, vec!["views", "site", "page"]);
        let q = Query::parse("DELETE FROM typestest WHERE name = ? AND choice = ?", &t).unwrap();
        assert_eq!(q.verb, Verb::Delete);
    }

    #[test]
    fn bad_queries_name_the_problem() {
        let t = Table::parse(TYPESTEST).unwrap();
        for (cql, says) in [
            (
                "select * from typestest where nme = ?",
                "column 'nme' is not in table typestest",
            ),
            ("select * from other where name = ?", "on table 'other'"),
            (
                "select * from typestest where name = ? limit ?",
                "marker 2 is not bound",
            ),
            ("truncate typestest", "begins with SELECT"),
        ] {
            let e = Query::parse(cql, &t).unwrap_err();
            assert!(e.0.contains(says), "{cql}: {e}");
        }
    }
}
