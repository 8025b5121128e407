;; wait-then-spin calls the host's wait, then spins forever: a deadline
;; that passes while the host works must still stop the spin promptly.
(component
  (import "mur:test/host@0.1.0" (instance $host
    (export "wait" (func))
  ))
  (core func $wait (canon lower (func $host "wait")))
  (core module $m
    (import "host" "wait" (func $wait))
    (func (export "wait-then-spin")
      call $wait
      (loop (br 0)))
  )
  (core instance $hi (export "wait" (func $wait)))
  (core instance $i (instantiate $m (with "host" (instance $hi))))
  (func (export "wait-then-spin") (canon lift (core func $i "wait-then-spin")))
)
