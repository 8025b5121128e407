package config_test

import (
	"github.com/murmur/mur/internal/config"
	"github.com/murmur/mur/internal/gateway"
)

// The credential gateway reads credentials.<NAME> through this type.
var _ gateway.Credentials = (*config.Credentials)(nil)
