//! The names bound where the cursor stands, which no declaration of the
//! ruleset makes: the parameters of the item around it, a decision's
//! option names and the variables its clauses bind, a procedure's `let`s
//! and loop variables written before the cursor, the variable of every
//! quantifier around it, the options a policy line scores (the decision's
//! names), and the outcomes a `chance`/`expect` reads. Found from the
//! merged syntax, by spans: what the compiler's scopes would resolve, for
//! completion, hover and go to definition.

use crate::front::syntax::*;

/// One name bound at the cursor.
#[derive(Clone, Debug)]
pub struct Local {
    pub name: String,
    /// What binds it, in words (`parameter of define engaged`).
    pub what: String,
    /// Where it is bound.
    pub span: Span,
}

/// Does `s` hold the offset `at` of file `file`?
fn holds(s: Span, file: FileId, at: u32) -> bool {
    s.file == file && s.start <= at && at <= s.end
}

/// The names bound at offset `at` of `file`, innermost last (a name bound
/// twice is the later one, as the compiler resolves it).
pub fn locals(items: &[Item], file: FileId, at: u32) -> Vec<Local> {
    let mut out = Vec::new();
    let Some(item) = items.iter().find(|i| holds(i.span, file, at)) else {
        return out;
    };
    let mut w = Walk {
        items,
        file,
        at,
        out: &mut out,
    };
    w.item(item);
    out
}

struct Walk<'a> {
    items: &'a [Item],
    file: FileId,
    at: u32,
    out: &'a mut Vec<Local>,
}

impl Walk<'_> {
    fn bind(&mut self, n: &Name, what: String) {
        self.out.push(Local {
            name: n.text.clone(),
            what,
            span: n.span,
        });
    }

    fn params(&mut self, ps: &[Param], whose: &str) {
        for p in ps {
            self.bind(
                &p.name,
                format!("parameter `{}: {}` of {whose}", p.name.text, p.ty.text),
            );
        }
    }

    /// Bound before the cursor (a `let`, a loop variable).
    fn before(&self, n: &Name) -> bool {
        n.span.file == self.file && n.span.start <= self.at
    }

    fn item(&mut self, item: &Item) {
        match &item.kind {
            ItemKind::Define(d) => {
                self.params(&d.params, &format!("define `{}`", d.name.text));
                self.expr(&d.body);
            }
            ItemKind::Table(t) => {
                self.params(&t.params, &format!("table `{}`", t.name.text));
                self.rows(&t.rows);
            }
            ItemKind::TableExtend(name, rows) => {
                if let Some(t) = self.find(|k| match k {
                    ItemKind::Table(t) if t.name.text == name.text => Some(t.params.clone()),
                    _ => None,
                }) {
                    self.params(&t, &format!("table `{}`", name.text));
                }
                self.rows(rows);
            }
            ItemKind::Quantity(q) => {
                self.params(&q.params, &format!("quantity `{}`", q.name.text));
                self.expr(&q.body);
            }
            ItemKind::Modifier(m) => {
                if let Some(ps) = self.find(|k| match k {
                    ItemKind::Quantity(q) if q.name.text == m.quantity.text => {
                        Some(q.params.clone())
                    }
                    _ => None,
                }) {
                    self.params(&ps, &format!("quantity `{}`", m.quantity.text));
                }
                self.expr(&m.amount);
                if let Some(w) = &m.when {
                    self.expr(w);
                }
            }
            ItemKind::Fact(f) => {
                for (n, ty) in &f.params {
                    if let Some(n) = n {
                        self.bind(
                            n,
                            format!(
                                "parameter `{}: {}` of fact `{}`",
                                n.text, ty.text, f.name.text
                            ),
                        );
                    }
                }
                for e in f.default.iter().chain(&f.battle) {
                    self.expr(e);
                }
            }
            ItemKind::Procedure(p) => {
                self.params(&p.params, &format!("procedure `{}`", p.name.text));
                self.stmts(&p.body, &p.name.text);
            }
            ItemKind::Decision(d) => self.decision(d),
            ItemKind::Policy(p) => {
                for (decision, e) in &p.lines {
                    if !holds(e.span, self.file, self.at) {
                        continue;
                    }
                    let d = self.find(|k| match k {
                        ItemKind::Decision(d) if d.name.text == decision.text => Some(d.clone()),
                        _ => None,
                    });
                    if let Some(d) = d {
                        self.options(&d);
                    }
                    self.expr(e);
                }
            }
            ItemKind::Effects(e) => {
                self.params(&e.params, &format!("effects `{}`", e.name.text));
                for r in &e.rows {
                    for (_, _, c) in &r.yields {
                        if let Some(c) = c {
                            self.expr(c);
                        }
                    }
                }
            }
            ItemKind::Deck(d) => {
                self.params(&d.params, &format!("deck `{}`", d.name.text));
                for c in &d.cards {
                    if !holds(c.span, self.file, self.at) {
                        continue;
                    }
                    if let Some(each) = &c.each {
                        self.bind(
                            &each.var,
                            format!(
                                "each of the {} a card of `{}` is for",
                                each.coll.text, d.name.text
                            ),
                        );
                    }
                    for e in c.when.iter() {
                        self.expr(e);
                    }
                }
            }
            _ => {}
        }
    }

    /// An item of the merged list, by what `f` picks of it.
    fn find<T>(&self, f: impl Fn(&ItemKind) -> Option<T>) -> Option<T> {
        self.items.iter().find_map(|i| f(&i.kind))
    }

    fn rows(&mut self, rows: &[Row]) {
        for r in rows {
            if let Guard::When(g) = &r.guard {
                self.expr(g);
            }
            self.expr(&r.value);
        }
    }

    /// A decision's parameters and what its body binds.
    fn decision(&mut self, d: &Decision) {
        self.options(d);
        if let Some(c) = &d.choice {
            self.expr(&c.legal);
            for cl in &c.clauses {
                match cl {
                    Clause::Expr(_, e) | Clause::Bound(_, _, e) => self.expr(e),
                    Clause::Check(_, args, unless, _) => {
                        args.iter().chain(unless).for_each(|e| self.expr(e))
                    }
                    Clause::Then(_, args, _) => args.iter().for_each(|e| self.expr(e)),
                    Clause::Pay(p) => [&p.cost, &p.from]
                        .into_iter()
                        .chain(&p.to)
                        .for_each(|e| self.expr(e)),
                }
            }
        }
    }

    /// The names a decision binds for each option (its parameters, the
    /// chosen units, a clause's variable): what its policy lines read.
    fn options(&mut self, d: &Decision) {
        let whose = format!("decision `{}`", d.name.text);
        self.params(&d.params, &whose);
        if let Some(c) = &d.choice {
            for v in &c.vars {
                self.bind(v, format!("an option of {whose}"));
            }
            for cl in &c.clauses {
                if let Clause::Bound(kw, v, _) = cl {
                    self.bind(v, format!("bound by `{}` in {whose}", kw.text));
                }
            }
        }
    }

    fn stmts(&mut self, body: &[Stmt], proc: &str) {
        for s in body {
            match s {
                Stmt::Let(n, e) => {
                    self.expr(e);
                    if self.before(n) {
                        self.bind(n, format!("`let` in procedure `{proc}`"));
                    }
                }
                Stmt::Outcome(_, e) | Stmt::Mark(e, _) => self.expr(e),
                Stmt::Require(e, _, _) => self.expr(e),
                Stmt::If(c, a, b) => {
                    self.expr(c);
                    self.stmts(a, proc);
                    self.stmts(b, proc);
                }
                Stmt::Assign(t, _, v, _) => {
                    self.expr(t);
                    self.expr(v);
                }
                Stmt::Call(_, args, _) => args.iter().for_each(|e| self.expr(e)),
                Stmt::Note(_, args, v, _) => args.iter().chain(v).for_each(|e| self.expr(e)),
                Stmt::For(n, _, c, body) => {
                    if self.before(n) {
                        self.bind(
                            n,
                            format!("the loop variable of a `for` in procedure `{proc}`"),
                        );
                    }
                    self.expr(c);
                    self.stmts(body, proc);
                }
                Stmt::ForFile(f) => {
                    if self.before(&f.var) {
                        self.bind(
                            &f.var,
                            format!("the file of a `for file` in procedure `{proc}`"),
                        );
                        if let Some((l, r)) = &f.beside {
                            self.bind(l, "the mark of the file to its left".to_string());
                            self.bind(r, "the mark of the file to its right".to_string());
                        }
                    }
                    for e in [&f.formation, &f.cond].into_iter().chain(&f.start) {
                        self.expr(e);
                    }
                    self.stmts(&f.body, proc);
                }
            }
        }
    }

    /// The names an expression binds around the cursor: a quantifier's
    /// variable within it, a `chance`/`expect`'s outcomes within what it
    /// reads of them.
    fn expr(&mut self, e: &Expr) {
        if !holds(e.span, self.file, self.at) {
            return;
        }
        match &e.kind {
            ExprKind::Int(_)
            | ExprKind::Bool(_)
            | ExprKind::None
            | ExprKind::Unlimited
            | ExprKind::Name(_) => {}
            ExprKind::Field(x, _) | ExprKind::Original(x) | ExprKind::Neg(x) | ExprKind::Not(x) => {
                self.expr(x)
            }
            ExprKind::Is(x, _, _) => self.expr(x),
            ExprKind::Call(_, args) => args.iter().for_each(|a| self.expr(a)),
            ExprKind::Binary(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::If(c, a, b) => {
                self.expr(c);
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Quant(q, v, _, body, of) => {
                self.bind(v, format!("the variable of `{}`", quant_word(*q)));
                self.expr(body);
                if let Some(of) = of {
                    self.expr(of);
                }
            }
            ExprKind::Dice { count, scoring, .. } => {
                self.expr(count);
                if let Some(s) = scoring {
                    self.expr(s);
                }
            }
            ExprKind::Roll { pool, args, .. } => {
                self.expr(pool);
                args.iter().for_each(|a| self.expr(a));
            }
            ExprKind::Odds(o) => {
                o.args.iter().chain(&o.given).for_each(|a| self.expr(a));
                if holds(o.of.span, self.file, self.at) {
                    let outcomes = self.find(|k| match k {
                        ItemKind::Procedure(p) if p.name.text == o.procedure.text => {
                            Some(p.outcomes.clone())
                        }
                        _ => None,
                    });
                    for d in outcomes.unwrap_or_default() {
                        self.bind(
                            &d.name,
                            format!("an outcome of procedure `{}`", o.procedure.text),
                        );
                    }
                    self.expr(&o.of);
                }
            }
        }
    }
}

/// A quantifier as written.
fn quant_word(q: Quant) -> &'static str {
    match q {
        Quant::Any => "any",
        Quant::First => "first",
        Quant::All => "all",
        Quant::Count => "count",
        Quant::Sum => "sum",
        Quant::Min => "min",
        Quant::Max => "max",
    }
}
