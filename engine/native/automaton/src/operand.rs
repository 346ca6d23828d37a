//! A step's operand with GPMs as plan indexes and each conjunction numbered (a run buffers
//! a conjunction's operand results per timestamp under that number).

use crate::query::Unsupported;
use spaseq_plan::algebra::Operand;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Gpm(usize),
    And { id: usize, operands: Vec<Op> },
    Or(Vec<Op>),
}

impl Op {
    /// `gpm_index` maps a GPM name to its index; `next_id` numbers conjunctions.
    pub fn compile(
        operand: &Operand,
        gpm_index: &dyn Fn(&str) -> Option<usize>,
        next_id: &mut usize,
    ) -> Result<Op, Unsupported> {
        Ok(match operand {
            Operand::Gpm(name) => {
                Op::Gpm(gpm_index(name).ok_or_else(|| Unsupported(format!("no GPM named {name}")))?)
            }
            Operand::And(ops) => {
                let id = *next_id;
                *next_id += 1;
                Op::And {
                    id,
                    operands: ops
                        .iter()
                        .map(|o| Op::compile(o, gpm_index, next_id))
                        .collect::<Result<_, _>>()?,
                }
            }
            Operand::Or(ops) => Op::Or(
                ops.iter()
                    .map(|o| Op::compile(o, gpm_index, next_id))
                    .collect::<Result<_, _>>()?,
            ),
        })
    }

    /// The GPMs in written order.
    pub fn gpms(&self, out: &mut Vec<usize>) {
        match self {
            Op::Gpm(g) => out.push(*g),
            Op::And { operands, .. } | Op::Or(operands) => {
                operands.iter().for_each(|o| o.gpms(out))
            }
        }
    }
}
