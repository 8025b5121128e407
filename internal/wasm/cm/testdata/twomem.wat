;; Two core instances with a 3-page memory each: 6 pages in all.
(component
  (core module $m (memory 3))
  (core instance $a (instantiate $m))
  (core instance $b (instantiate $m))
)
