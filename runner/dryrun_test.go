package runner

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tasksim/tasksim/scenarios"
)

// TestPlanNamesEveryFault: every field of faults.client, faults.server and faults.network
// that turns faults on by itself shows in the plan under its scenario path, so that a new
// fault cannot be left out of --dry-run.
func TestPlanNamesEveryFault(t *testing.T) {
	on := map[reflect.Type]reflect.Value{
		reflect.TypeFor[scenarios.Trigger]():  reflect.ValueOf(scenarios.Trigger{Probability: 0.5}),
		reflect.TypeFor[scenarios.Schedule](): reflect.ValueOf(scenarios.Schedule{Every: scenarios.Duration(10 * time.Second)}),
		reflect.TypeFor[scenarios.Dist]():     reflect.ValueOf(scenarios.Dist{Kind: scenarios.DistFixed, Value: scenarios.Duration(time.Millisecond)}),
		reflect.TypeFor[bool]():               reflect.ValueOf(true),
		reflect.TypeFor[int64]():              reflect.ValueOf(int64(1000)),
		reflect.TypeFor[int]():                reflect.ValueOf(500),
		reflect.TypeFor[scenarios.Duration](): reflect.ValueOf(scenarios.Duration(time.Second)),
	}
	sections := []struct {
		name  string
		field func(*scenarios.Faults) reflect.Value
	}{
		{"client", func(f *scenarios.Faults) reflect.Value { return reflect.ValueOf(&f.Client).Elem() }},
		{"server", func(f *scenarios.Faults) reflect.Value { return reflect.ValueOf(&f.Server).Elem() }},
		{"network", func(f *scenarios.Faults) reflect.Value { return reflect.ValueOf(&f.Network).Elem() }},
	}
	for _, sec := range sections {
		typ := sec.field(&scenarios.Faults{}).Type()
		for i := range typ.NumField() {
			f := typ.Field(i)
			path := sec.name + "." + strings.Split(f.Tag.Get("yaml"), ",")[0]
			v, ok := on[f.Type]
			if !ok {
				t.Errorf("%s: type %v unknown to this test", path, f.Type)
				continue
			}
			sc := scenarios.Default()
			sec.field(&sc.Faults).Field(i).Set(v)
			if !sc.Faults.On() {
				continue // a modifier of another fault (status, reset_after, half_open_after)
			}
			var got []string
			for _, p := range faultPlans(sc) {
				got = append(got, p.path)
			}
			if len(got) != 1 || got[0] != path {
				t.Errorf("with only %s on, the plan lists %q", path, got)
			}
		}
	}
}
