//! `cairn report`: one self-contained HTML file for a stream. No network: the CSS, the SVG
//! charts, the script and the data are all inline.

use super::{lineage, loss_json, replay, Replay, SHOWN_DEPTH};
use crate::error::Result;
use crate::record::{Kind, Record, Rid};
use crate::store::Read;
use serde_json::{json, Value};
use std::collections::BTreeSet;

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const W: f64 = 760.0;
const H: f64 = 220.0;
const PAD: f64 = 36.0;

fn x_of(i: usize, n: usize) -> f64 {
    if n <= 1 {
        PAD + (W - 2.0 * PAD) / 2.0
    } else {
        PAD + (W - 2.0 * PAD) * i as f64 / (n - 1) as f64
    }
}

fn y_of(v: f64) -> f64 {
    H - PAD - (H - 2.0 * PAD) * v.clamp(0.0, 1.0)
}

/// The timeline: one mark per boundary, green when admitted, red when refused.
fn timeline(r: &Replay) -> String {
    let n = r.boundaries.len();
    let mut svg = format!(
        r#"<svg id="timeline" viewBox="0 0 {W} 90" width="100%" role="img" aria-label="timeline of boundaries"><line x1="{PAD}" y1="45" x2="{}" y2="45" class="axis"/>"#,
        W - PAD
    );
    for (i, b) in r.boundaries.iter().enumerate() {
        let x = x_of(i, n);
        let (class, word) = match b.admitted {
            Some(true) => ("admitted", "admitted"),
            Some(false) => ("refused", "refused"),
            None => ("ungated", "ungated"),
        };
        svg.push_str(&format!(
            r#"<g class="mark {class}" data-boundary="{}" tabindex="0"><title>boundary {} {word}</title><circle cx="{x:.1}" cy="45" r="9"/><text x="{x:.1}" y="75" text-anchor="middle">{}</text></g>"#,
            b.number, b.number, b.number
        ));
    }
    svg.push_str("</svg>");
    svg
}

/// The chart of self-reported against reference-anchored fidelity, boundary by boundary.
fn chart(r: &Replay) -> String {
    let n = r.boundaries.len();
    let mut svg = format!(
        r#"<svg id="chart" viewBox="0 0 {W} {H}" width="100%" role="img" aria-label="self score against anchored score">"#
    );
    for v in [0.0, 0.5, 0.8, 1.0] {
        let y = y_of(v);
        svg.push_str(&format!(
            r#"<line x1="{PAD}" y1="{y:.1}" x2="{}" y2="{y:.1}" class="{}"/><text x="4" y="{:.1}" class="tick">{v:.1}</text>"#,
            W - PAD,
            if v == 0.8 { "threshold" } else { "grid" },
            y + 4.0
        ));
    }
    let line = |pick: &dyn Fn(&crate::replay::Boundary) -> Option<f64>, class: &str| {
        let pts: Vec<String> = r
            .boundaries
            .iter()
            .enumerate()
            .filter_map(|(i, b)| pick(b).map(|v| format!("{:.1},{:.1}", x_of(i, n), y_of(v))))
            .collect();
        let dots: String = r
            .boundaries
            .iter()
            .enumerate()
            .filter_map(|(i, b)| {
                pick(b).map(|v| {
                    format!(
                        r#"<circle cx="{:.1}" cy="{:.1}" r="4" class="{class}"><title>boundary {} {class} {v:.2}</title></circle>"#,
                        x_of(i, n),
                        y_of(v),
                        b.number
                    )
                })
            })
            .collect();
        format!(
            r#"<polyline points="{}" class="{class}"/>{dots}"#,
            pts.join(" ")
        )
    };
    svg.push_str(&line(&|b| b.self_score, "self"));
    svg.push_str(&line(&|b| b.anchored_score, "anchored"));
    for (i, b) in r.boundaries.iter().enumerate() {
        svg.push_str(&format!(
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" class="tick">{}</text>"#,
            x_of(i, n),
            H - 12.0,
            b.number
        ));
    }
    svg.push_str(&format!(
        r#"<g class="legend"><rect x="{}" y="8" width="12" height="4" class="self"/><text x="{}" y="14">self score</text><rect x="{}" y="8" width="12" height="4" class="anchored"/><text x="{}" y="14">anchored score</text></g></svg>"#,
        W - 260.0,
        W - 244.0,
        W - 150.0,
        W - 134.0
    ));
    svg
}

fn refused(r: &Replay) -> String {
    let mut rows = String::new();
    for b in r.boundaries.iter().filter(|b| b.admitted == Some(false)) {
        for (g, d) in b.findings.iter().filter(|(g, _)| g.refuses()) {
            rows.push_str(&format!(
                "<tr><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
                b.number,
                esc(g.name()),
                esc(d)
            ));
        }
    }
    if rows.is_empty() {
        return "<p>No compaction of this stream was refused.</p>".into();
    }
    format!("<table id=\"refused\"><thead><tr><th>boundary</th><th>gate</th><th>reason</th></tr></thead><tbody>{rows}</tbody></table>")
}

/// Every action of the stream with each of its checks and the verdict it got.
fn actions(r: &Replay) -> String {
    let mut rows = String::new();
    for a in &r.actions {
        for (k, c) in a.checks.iter().enumerate() {
            let (class, verdict) = match c.admitted {
                Some(true) => ("admitted", "admitted"),
                Some(false) => ("refused", "refused"),
                None => ("ungated", "not gated"),
            };
            let why: Vec<String> = (c.findings.iter())
                .map(|(g, d)| format!("<code>{}</code> {}", esc(g.name()), esc(d)))
                .collect();
            rows.push_str(&format!(
                "<tr><td><code>{}</code>{}</td><td>{}</td><td>{}</td><td><span class=\"st {class}\">{verdict}</span></td><td>{}</td></tr>",
                esc(&a.text),
                if a.irreversible { " (irreversible)" } else { "" },
                k + 1,
                c.index,
                why.join("<br>")
            ));
        }
    }
    if rows.is_empty() {
        return "<p>No action of this stream was checked.</p>".into();
    }
    format!("<table id=\"actions\"><thead><tr><th>action</th><th>check</th><th>log index</th><th>verdict</th><th>findings</th></tr></thead><tbody>{rows}</tbody></table>")
}

const STYLE: &str = r#"
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:980px;color:#1d232b;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #dde2e8;padding-bottom:4px}
.sub{color:#5b6570;overflow-wrap:anywhere}.warn{background:#fff4e5;border-left:4px solid #e8890c;padding:8px 12px;margin:12px 0}
svg text{font-size:11px;fill:#3a434d}.axis{stroke:#9aa4ae;stroke-width:2}.grid{stroke:#e6eaee}.threshold{stroke:#e8890c;stroke-dasharray:4 3}
.tick{fill:#6b7580}.mark{cursor:pointer}.mark circle{stroke:#fff;stroke-width:2}.admitted circle{fill:#2e9e5b}.refused circle{fill:#d23c3c}.ungated circle{fill:#9aa4ae}
.mark.selected circle{stroke:#1d232b;stroke-width:3}
polyline{fill:none;stroke-width:2.5}polyline.self{stroke:#3b6fd6}polyline.anchored{stroke:#e8890c}circle.self{fill:#3b6fd6}circle.anchored{fill:#e8890c}
rect.self{fill:#3b6fd6}rect.anchored{fill:#e8890c}
table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #e6eaee;padding:5px 8px;text-align:left;vertical-align:top}th{font-weight:600;color:#3a434d}
.claim{cursor:pointer;color:#1f4fb4}.claim:hover{text-decoration:underline}
.st{font-size:11px;border-radius:3px;padding:1px 5px;margin-left:4px;color:#fff}
.verified,.st.admitted{background:#2e9e5b}.st.refused{background:#d23c3c}.unverified{background:#b7791f}.unanchored{background:#d23c3c}.fabricated{background:#8e2bb8}.ungated,.raw{background:#6b7580}
#lineage ul{list-style:none;padding-left:18px;border-left:1px dashed #c5ccd3;margin:4px 0}#lineage li{margin:4px 0}
.hop{font-size:11px;color:#5b6570;text-transform:uppercase;letter-spacing:.03em;margin-right:6px}.span{background:#f3f5f7;border-radius:4px;padding:2px 6px}
.loss{background:#fdecec;border-left:4px solid #d23c3c;padding:8px 12px;margin:8px 0}
#detail{background:#f7f9fb;border:1px solid #e6eaee;border-radius:6px;padding:10px 14px;min-height:40px}
"#;

const SCRIPT: &str = r#"
const data = JSON.parse(document.getElementById('cairn-data').textContent);
function el(tag, cls, text){const e=document.createElement(tag);if(cls)e.className=cls;if(text!==undefined)e.textContent=text;return e;}
function status(s){const k=s.startsWith('raw')?'raw':s;return el('span','st '+k,s);}
function tree(rid,hop,depth,seen,budget){
  const n=data.nodes[rid];const li=el('li');li.appendChild(el('span','hop',hop));
  const body=el('span',n.kind==='span'?'span':'');
  body.textContent=(n.kind==='span'?n.detail+': ':'['+n.detail+'] ')+n.text;
  li.appendChild(body);li.appendChild(status(n.status));
  if(n.kind==='claim'&&seen.has(rid)){li.appendChild(el('span','sub',' (shown above)'));return li;}
  seen.add(rid);budget.left--;
  if(!n.children.length)return li;
  if(depth>=data.shown_depth||budget.left<=0){
    const more=el('span','claim',' the lineage goes on below this claim, not drawn here: show it from here');
    more.onclick=()=>showClaim(rid);li.appendChild(more);return li;
  }
  const ul=el('ul');
  for(const [c,h] of n.children){
    if(budget.left<=0){ul.appendChild(el('li','sub','more of this lineage is not drawn here: click a claim above to draw it from there'));break;}
    ul.appendChild(tree(c,h,depth+1,seen,budget));
  }
  li.appendChild(ul);
  return li;
}
function showClaim(rid){
  const n=data.nodes[rid];const box=document.getElementById('lineage');box.innerHTML='';
  if(!n){box.textContent='No lineage recorded.';return;}
  box.appendChild(el('h3',null,'Lineage of: '+n.text));
  const l=data.first_loss[rid];
  if(l){const d=el('div','loss');d.textContent='Provenance first lost at log index '+l.index+' ('+l.gate+'): '+l.detail;box.appendChild(d);}
  else{box.appendChild(el('p','sub','Provenance intact: every step rests on raw spans.'));}
  const ul=el('ul');ul.appendChild(tree(rid,'claim',0,new Set(),{left:2000}));box.appendChild(ul);
  box.scrollIntoView({behavior:'smooth',block:'nearest'});
}
function showBoundary(n){
  document.querySelectorAll('.mark').forEach(m=>m.classList.toggle('selected',m.dataset.boundary==String(n)));
  const b=data.replay.boundaries[n-1];const box=document.getElementById('detail');box.innerHTML='';
  box.appendChild(el('strong',null,'Boundary '+b.number+': '+b.verdict));
  box.appendChild(el('div','sub','budget '+b.budget+', depth '+b.depth+', self score '+(b.self_score??'-')+', anchored score '+(b.anchored_score??'-')+', evicts turns '+(b.evicted_runs||'none')));
  const ul=el('ul');
  [['new',b.new],['carried',b.carried]].forEach(([label,list])=>list.forEach(c=>{const li=el('li');li.appendChild(el('span','hop',label));const a=el('span','claim',c.text);a.onclick=()=>showClaim(c.rid);li.appendChild(a);li.appendChild(status(c.status));ul.appendChild(li);}));
  b.dropped.forEach(c=>{const li=el('li');li.appendChild(el('span','hop','dropped'));li.appendChild(el('span',null,c.text));ul.appendChild(li);});
  b.findings.forEach(f=>{const li=el('li');li.appendChild(el('code',null,f.gate));li.appendChild(el('span',null,' '+f.detail));ul.appendChild(li);});
  box.appendChild(ul);
}
document.querySelectorAll('.mark').forEach(m=>{m.addEventListener('click',()=>showBoundary(+m.dataset.boundary));m.addEventListener('keydown',e=>{if(e.key==='Enter')showBoundary(+m.dataset.boundary);});});
document.querySelectorAll('[data-claim]').forEach(c=>c.addEventListener('click',()=>showClaim(c.dataset.claim)));
if(data.replay.boundaries.length){showBoundary(data.replay.boundaries.length);}
if(location.hash.startsWith('#claim=')){showClaim(location.hash.slice(7));}
"#;

/// Appends a JSON value to the report's data. Inside a script element the HTML parser still
/// reads `</script`, `<!--` and `<script` (the "script data escaped" states), so no `<` of the
/// data reaches it: JSON writes it as \u003c inside strings, the only place a JSON text holds
/// one (and `>` and `&` likewise).
fn push_json(out: &mut String, v: &Value) {
    for c in v.to_string().chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            c => out.push(c),
        }
    }
}

/// The report for a stream, as one HTML document.
pub fn html<R: Read>(read: &R, stream: &str) -> Result<String> {
    let r = replay(read, stream)?;
    let mut claims: BTreeSet<(u64, Rid)> = BTreeSet::new();
    for rid in read.of_kind(Kind::Claim)? {
        if let Some(Record::Claim(c)) = read.get(&rid)? {
            if c.stream == stream {
                claims.insert((read.index_of(&rid)?.unwrap_or_default(), rid));
            }
        }
    }
    // Every record the claims rest on, once, with its children by rid: the script draws a
    // claim's lineage from it on demand, so the data grows with the records, not with the
    // sum of every claim's tree (quadratic on a deep chain).
    let roots: Vec<Rid> = claims.iter().map(|(_, r)| *r).collect();
    let lineage = lineage(read, &roots)?;
    // The data is written piece by piece into one string, never held whole as a JSON tree.
    let mut data = String::from("{\"replay\":");
    push_json(&mut data, &r.to_json());
    data.push_str(",\"nodes\":{");
    let mut shown = std::collections::HashMap::new();
    for (i, (n, under)) in lineage.nodes.iter().enumerate() {
        let under: Vec<Value> = (under.iter())
            .map(|(r, hop)| json!([r.to_hex(), hop.label()]))
            .collect();
        if i > 0 {
            data.push(',');
        }
        data.push_str(&format!("\"{}\":", n.rid.to_hex()));
        push_json(
            &mut data,
            &json!({"kind": n.kind.name(), "text": n.text, "detail": n.detail,
                    "status": n.status, "index": n.index, "children": under}),
        );
        shown.insert(n.rid, (n.text.as_str(), n.status.as_str()));
    }
    data.push_str("},\"first_loss\":{");
    let mut list = String::new();
    let mut losses = 0;
    for (_, rid) in &claims {
        let (text, status) = shown.get(rid).copied().unwrap_or_default();
        let first = lineage.first_loss.get(rid);
        list.push_str(&format!(
            "<tr><td><span class=\"claim\" data-claim=\"{}\">{}</span></td><td><span class=\"st {}\">{}</span></td><td>{}</td></tr>",
            rid.to_hex(),
            esc(text),
            esc(status),
            esc(status),
            first.map(|l| format!("<code>{}</code>", esc(l.gate.name()))).unwrap_or_else(|| "intact".into())
        ));
        if let Some(l) = first {
            if losses > 0 {
                data.push(',');
            }
            losses += 1;
            data.push_str(&format!("\"{}\":", rid.to_hex()));
            push_json(&mut data, &loss_json(l));
        }
    }
    data.push_str(&format!("}},\"shown_depth\":{SHOWN_DEPTH}}}"));
    let admitted = r
        .boundaries
        .iter()
        .filter(|b| b.admitted == Some(true))
        .count();
    let refused_n = r
        .boundaries
        .iter()
        .filter(|b| b.admitted == Some(false))
        .count();
    let warning = r
        .gap_warning
        .as_ref()
        .map(|w| format!("<div class=\"warn\" id=\"gap-warning\">{}</div>", esc(w)))
        .unwrap_or_default();
    Ok(format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>cairn report: {title}</title><style>{STYLE}</style></head>
<body>
<h1>cairn report: stream {title}</h1>
<p class="sub">{n} boundaries: {admitted} admitted, {refused_n} refused; {claims_n} claims. Generated from the ledger's records alone.</p>
{warning}
<h2>Timeline of boundaries</h2>
{timeline}
<div id="detail"></div>
<h2>Self-reported against reference-anchored fidelity</h2>
{chart}
<h2>Refused compactions</h2>
{refused}
<h2>Actions</h2>
{actions}
<h2>Claims</h2>
<p class="sub">Click a claim to see its lineage down to the raw spans.</p>
<table id="claims"><thead><tr><th>claim</th><th>status</th><th>first loss</th></tr></thead><tbody>{list}</tbody></table>
<div id="lineage"></div>
<script type="application/json" id="cairn-data">{data}</script>
<script>{SCRIPT}</script>
</body></html>
"#,
        title = esc(stream),
        n = r.boundaries.len(),
        claims_n = claims.len(),
        timeline = timeline(&r),
        chart = chart(&r),
        refused = refused(&r),
        actions = actions(&r),
    ))
}
