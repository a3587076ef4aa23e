"""The engine below the Tensor: grad mode and FLOPs counting (``mode``), the module recorder
(``recorder``) and the backward walk (``walk``).  It knows backend arrays and graph nodes, never
the ops: the ops, ``grad`` and ``gradcheck`` (``lucid.autograd``) sit above the Tensor."""
