//go:build wasip1

package main

import pd "github.com/murmur/mur/sdk/go/processdriver"

func init() { pd.Run(claude{}) }
