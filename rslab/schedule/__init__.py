"""Modulo scheduling of a loop body for the vector core (Rau 1994; Lam 1988).

The pieces, in the order a loop goes through them:

- :mod:`~rslab.schedule.model`: the machine as the scheduler sees it (``SlotModel``,
  derived from ``MachineConfig`` and the ISA table);
- :mod:`~rslab.schedule.body`: a loop body (``Op``, ``Use``, ``Addr``) and its dependence
  graph (``build_graph``);
- :mod:`~rslab.schedule.bounds`: ResMII and RecMII with what binds (``analyse``);
- :mod:`~rslab.schedule.modulo`: iterative modulo scheduling (``modulo_schedule``) and the
  check of any schedule (``check_schedule``);
- :mod:`~rslab.schedule.exact`: the same question at one II as an integer program;
- :mod:`~rslab.schedule.lifetimes`: delaying ops by whole IIs to shorten register lifetimes;
- :mod:`~rslab.schedule.expand`: prologue / kernel / epilogue with modulo variable
  expansion, emitted as assembly;
- :mod:`~rslab.schedule.listsched`: list scheduling of one iteration (no overlap), for
  plain loops;
- :mod:`~rslab.schedule.bodytext`, :mod:`~rslab.schedule.bases`,
  :mod:`~rslab.schedule.unroll`, :mod:`~rslab.schedule.pipeliner`: the loop-body text of
  ``rslab pipeline`` and the program it makes of it; :mod:`~rslab.schedule.sequential` its
  meaning.
"""

from rslab.schedule.body import Addr, Edge, Graph, Op, Use, build_graph, closure_of_consumers
from rslab.schedule.bounds import Bounds, analyse, elementary_circuits, rec_mii, res_mii
from rslab.schedule.expand import Expansion, allocate_registers, expand, register_copies
from rslab.schedule.model import SlotModel, latency_class, slot_of
from rslab.schedule.modulo import Schedule, check_schedule, fifo_order_ok, modulo_schedule

__all__ = ["Addr", "Bounds", "Edge", "Expansion", "Graph", "Op", "Schedule", "SlotModel", "Use",
           "allocate_registers", "analyse", "build_graph", "check_schedule",
           "closure_of_consumers", "elementary_circuits", "expand", "fifo_order_ok",
           "latency_class", "modulo_schedule", "rec_mii", "register_copies", "res_mii",
           "slot_of"]
