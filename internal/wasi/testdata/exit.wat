;; quit(failed) calls wasi:cli/exit with err (failed = 1) or ok (0); the
;; call must end there, with the status reported to the host.
(component
  (import "wasi:cli/exit@0.2.0" (instance $exit
    (export "exit" (func (param "status" (result))))
  ))
  (core func $exit (canon lower (func $exit "exit")))
  (core module $m
    (import "w" "exit" (func $exit (param i32)))
    (func (export "quit") (param $failed i32) (result i32)
      (call $exit (local.get $failed))
      ;; never reached
      (i32.const 42))
  )
  (core instance $i (instantiate $m (with "w" (instance (export "exit" (func $exit))))))
  (func (export "quit") (param "failed" bool) (result u32) (canon lift (core func $i "quit")))
)
