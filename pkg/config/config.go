// Package config loads a service's configuration from environment variables into a struct,
// using `env:"NAME"` and `default:"value"` tags, and `min:"value"` on a number or duration that
// must not go below value (a limit of 0 that would refuse every request, say). Supported field
// types: string, bool, int, int64, float64, time.Duration, []string (comma separated) and
// nested structs (flattened).
package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Load fills the struct pointed to by dst from the environment. A variable that is set but
// cannot be parsed or is below its `min`, or a field tagged `required:"true"` that is empty, is
// reported; all problems are returned together.
func Load(dst any) error {
	return LoadFrom(os.LookupEnv, dst)
}

// LoadFrom is Load with a custom lookup, for tests.
func LoadFrom(lookup func(string) (string, bool), dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return errors.New("config: destination must be a pointer to a struct")
	}
	var errs []error
	load(lookup, v.Elem(), &errs)
	return errors.Join(errs...)
}

var durationType = reflect.TypeFor[time.Duration]()

func load(lookup func(string) (string, bool), v reflect.Value, errs *[]error) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		fv := v.Field(i)
		if !f.IsExported() {
			continue
		}
		name, ok := f.Tag.Lookup("env")
		if !ok {
			if fv.Kind() == reflect.Struct && f.Type != durationType {
				load(lookup, fv, errs)
			}
			continue
		}
		raw, set := lookup(name)
		if !set || raw == "" {
			raw = f.Tag.Get("default")
		}
		if raw == "" {
			if f.Tag.Get("required") == "true" {
				*errs = append(*errs, fmt.Errorf("config: %s is required", name))
			}
			continue
		}
		if err := assign(fv, raw); err != nil {
			*errs = append(*errs, fmt.Errorf("config: %s=%q: %w", name, raw, err))
			continue
		}
		if lowest, ok := f.Tag.Lookup("min"); ok {
			if err := atLeast(fv, lowest); err != nil {
				*errs = append(*errs, fmt.Errorf("config: %s=%q: %w", name, raw, err))
			}
		}
	}
}

// atLeast reports a number or duration fv below lowest, its field's `min` tag.
func atLeast(fv reflect.Value, lowest string) error {
	floor := reflect.New(fv.Type()).Elem()
	if err := assign(floor, lowest); err != nil {
		return fmt.Errorf("its min tag %q: %w", lowest, err)
	}
	below := false
	switch fv.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		below = fv.Int() < floor.Int()
	case reflect.Float64:
		below = fv.Float() < floor.Float()
	default:
		return fmt.Errorf("a min tag on %s", fv.Type())
	}
	if below {
		return fmt.Errorf("must be at least %s", lowest)
	}
	return nil
}

func assign(fv reflect.Value, raw string) error {
	if fv.Type() == durationType {
		d, err := time.ParseDuration(raw)
		if err != nil {
			return err
		}
		fv.SetInt(int64(d))
		return nil
	}
	switch fv.Kind() {
	case reflect.String:
		fv.SetString(raw)
	case reflect.Bool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return err
		}
		fv.SetBool(b)
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, err := strconv.ParseInt(raw, 10, fv.Type().Bits())
		if err != nil {
			return err
		}
		fv.SetInt(n)
	case reflect.Float64:
		n, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return err
		}
		fv.SetFloat(n)
	case reflect.Slice:
		if fv.Type().Elem().Kind() != reflect.String {
			return fmt.Errorf("unsupported slice type %s", fv.Type())
		}
		var items []string
		for p := range strings.SplitSeq(raw, ",") {
			if p = strings.TrimSpace(p); p != "" {
				items = append(items, p)
			}
		}
		fv.Set(reflect.ValueOf(items))
	default:
		return fmt.Errorf("unsupported type %s", fv.Type())
	}
	return nil
}
