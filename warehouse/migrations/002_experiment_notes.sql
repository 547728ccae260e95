-- 002: experiments.notes, what an experiment left out and why (e.g. hugetlbfs pages not reserved),
-- joined with "; ". NULL when there is nothing to say.
ALTER TABLE experiments ADD COLUMN notes VARCHAR;
