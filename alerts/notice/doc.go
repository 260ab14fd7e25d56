// Package notice turns a firing alert into the enforcement document the
// municipality's Código de Posturas prescribes, and runs the fiscal's
// workflow on it. It is pure: no I/O, no clock (instants are passed in).
//
// # Documents per code
//
//   - Lapa: Notificação Preliminar (Arts. 333–335), every element of
//     Art. 334 I–VI; after the prazo, the Auto de Infração (Art. 337) with the
//     notice referenced.
//   - Conceição de Macabu: Intimação Preliminar (Arts. 171–172), not when
//     there is imminent risk to the community, prazo of at most 30 days set by
//     the fiscal; then the Auto de Infração (Art. 176).
//   - Entre Rios de Minas: Notificação/Intimação with the auto's fields
//     (Arts. 127–128).
//   - Campos Altos and Campina Grande do Sul have no preliminary notice: a
//     Relatório de Constatação records the measured facts and prepares the
//     Auto de Infração. The same happens under a ladder whose step for this
//     infraction is not a preliminary notice (a repeat offender in Lapa).
//
// Every required field of the code's document is present: pre-filled from
// the registry and the readings where the system knows it, or marked for the
// fiscal (by_hand in the code) — agent name, matrícula, signatures,
// witnesses, the prazo the fiscal sets.
//
// # Penalty
//
// The penalty comes from the code's provision for the rule and the
// infractor's history ([codes.Code.PenaltyForHistory]): ordinal ladders
// count prior infractions under the same provision; doubling needs a prior
// infraction "autuado e punido"; amounts only where the unit's value is
// configured; Lapa's appeal threshold (Art. 346 § 1º) is shown.
//
// # Workflow
//
//	draft ─issue (fiscal)→ issued ─ciente→ acknowledged ─┬─regularise (within prazo)→ regularised
//	                              └recusa (2 witnesses)→ refused ─┴─auto (prazo expired)→ escalated
//	draft ─cancel→ cancelled
//	relatório: draft ─issue→ issued ─auto→ escalated
//	auto:      draft ─issue→ issued ─ciente|recusa→ acknowledged|refused ─decide→ decided (punished or not)
//
// [Document.Apply] refuses every other transition with a pt-BR message that
// says what to do instead; only a fiscal acts.
package notice
