;; A memory of 4 pages and a table of 100 elements from the start.
(component
  (core module $m
    (memory 4)
    (table 100 funcref))
  (core instance $i (instantiate $m))
)
