package boardapi

func mapAll[D, W any](list []D, f func(D) W) []W {
	out := make([]W, len(list))
	for i, d := range list {
		out[i] = f(d)
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefList(s *[]string) []string {
	if s == nil {
		return nil
	}
	return *s
}
