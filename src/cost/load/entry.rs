//! One mapping of a catalogue file, with typed field accessors whose errors name the file,
//! the entry and the field.

use crate::yaml::{Mapping, Value};

use crate::cost::CostError;
use crate::cost::catalog::Source;

/// One mapping of the catalogue with the label errors name it by.
pub(super) struct Entry<'a> {
    file: &'a str,
    label: String,
    map: &'a Mapping,
}

impl<'a> Entry<'a> {
    pub(super) fn top(file: &'a str, root: &'a Value) -> Result<Self, CostError> {
        let map = root.as_object().ok_or_else(|| CostError::CatalogFile {
            file: file.to_string(),
            problem: "expected a mapping with instances, disks, kubernetes, …".into(),
        })?;
        Ok(Entry {
            file,
            label: "top level".into(),
            map,
        })
    }

    pub(super) fn child(&self, label: &str, v: &'a Value) -> Result<Entry<'a>, CostError> {
        let label = format!("{} {label}", self.label);
        let map = v.as_object().ok_or_else(|| CostError::CatalogFile {
            file: self.file.to_string(),
            problem: format!("{label}: expected a mapping of fields"),
        })?;
        Ok(Entry {
            file: self.file,
            label,
            map,
        })
    }

    /// Parses every item of the list `field` with `parse`; a missing list is empty.
    pub(super) fn list<T>(
        &self,
        file: &'a str,
        field: &str,
        kind: &str,
        parse: fn(&Entry) -> Result<T, CostError>,
    ) -> Result<Vec<T>, CostError> {
        let Some(v) = self.get(field) else {
            return Ok(Vec::new());
        };
        let items = v
            .as_array()
            .ok_or_else(|| self.err(field, &format!("expected a list of {kind} entries")))?;
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let key = if kind == "capacity" {
                "instance"
            } else {
                "name"
            };
            let name = item.get(key).and_then(Value::as_str);
            let label = name.map_or(format!("{kind} #{}", i + 1), |n| format!("{kind} \"{n}\""));
            let map = item.as_object().ok_or_else(|| CostError::CatalogFile {
                file: file.to_string(),
                problem: format!("{label}: expected a mapping of fields"),
            })?;
            out.push(parse(&Entry { file, label, map })?);
        }
        Ok(out)
    }

    pub(super) fn err(&self, field: &str, problem: &str) -> CostError {
        CostError::CatalogField {
            file: self.file.to_string(),
            entry: self.label.clone(),
            field: field.to_string(),
            problem: problem.to_string(),
        }
    }

    pub(super) fn missing(&self, field: &str) -> CostError {
        self.err(field, "missing")
    }

    pub(super) fn allow(&self, fields: &[&str]) -> Result<(), CostError> {
        self.allow_with(fields, &[])
    }

    pub(super) fn allow_with(&self, fields: &[&str], more: &[&str]) -> Result<(), CostError> {
        for key in self.map.keys() {
            let k = key.as_str();
            if !fields.contains(&k) && !more.contains(&k) {
                let known: Vec<&str> = fields.iter().chain(more).copied().collect();
                return Err(self.err(k, &format!("unknown field (known: {})", known.join(", "))));
            }
        }
        Ok(())
    }

    pub(super) fn get(&self, field: &str) -> Option<&'a Value> {
        self.map.get(field)
    }

    pub(super) fn opt_string(&self, field: &str) -> Result<Option<String>, CostError> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
            Some(_) => Err(self.err(field, "expected a non-empty string")),
        }
    }

    pub(super) fn string(&self, field: &str) -> Result<String, CostError> {
        self.opt_string(field)?.ok_or_else(|| self.missing(field))
    }

    pub(super) fn provider(&self) -> Result<String, CostError> {
        let p = self.string("provider")?;
        if ["aws", "gcp", "azure"].contains(&p.as_str()) {
            Ok(p)
        } else {
            Err(self.err("provider", "expected aws, gcp or azure"))
        }
    }

    pub(super) fn term(&self, field: &str) -> Result<String, CostError> {
        let t = self.string(field)?;
        if t == "1y" || t == "3y" {
            Ok(t)
        } else {
            Err(self.err(field, "expected 1y or 3y"))
        }
    }

    pub(super) fn number(
        &self,
        field: &str,
        ok: fn(f64) -> bool,
        expected: &str,
    ) -> Result<Option<f64>, CostError> {
        match self.get(field) {
            None => Ok(None),
            Some(v) => match v.as_f64() {
                Some(n) if n.is_finite() && ok(n) => Ok(Some(n)),
                _ => Err(self.err(field, expected)),
            },
        }
    }

    pub(super) fn opt_pos_num(&self, field: &str) -> Result<Option<f64>, CostError> {
        self.number(field, |n| n > 0.0, "expected a positive number")
    }

    pub(super) fn pos_num(&self, field: &str) -> Result<f64, CostError> {
        self.opt_pos_num(field)?.ok_or_else(|| self.missing(field))
    }

    pub(super) fn opt_nonneg_num(&self, field: &str) -> Result<Option<f64>, CostError> {
        self.number(field, |n| n >= 0.0, "expected a number of at least 0")
    }

    pub(super) fn nonneg_num(&self, field: &str) -> Result<f64, CostError> {
        self.opt_nonneg_num(field)?
            .ok_or_else(|| self.missing(field))
    }

    pub(super) fn opt_fraction(&self, field: &str) -> Result<Option<f64>, CostError> {
        self.number(
            field,
            |n| (0.0..1.0).contains(&n),
            "expected a fraction from 0 up to 1",
        )
    }

    pub(super) fn pos_int(&self, field: &str) -> Result<u32, CostError> {
        let v = self.get(field).ok_or_else(|| self.missing(field))?;
        v.as_u64()
            .filter(|n| *n > 0)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| self.err(field, "expected a positive integer"))
    }

    pub(super) fn source(&self) -> Result<Source, CostError> {
        let source = self.string("source")?;
        let date = self.string("date")?;
        if !is_date(&date) {
            return Err(self.err("date", "expected YYYY-MM or YYYY-MM-DD"));
        }
        Ok(Source { source, date })
    }
}

fn is_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let digits = |p: &str, n: usize| p.len() == n && p.chars().all(|c| c.is_ascii_digit());
    let month_ok = |p: &str| digits(p, 2) && (1..=12).contains(&p.parse::<u32>().unwrap_or(0));
    match parts.as_slice() {
        [y, m] => digits(y, 4) && month_ok(m),
        [y, m, d] => digits(y, 4) && month_ok(m) && digits(d, 2),
        _ => false,
    }
}
